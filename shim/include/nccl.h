/* SPDX-License-Identifier: Apache-2.0
 * The NCCL C API Genie's libnccl.so.2 serves: NCCL 2.32.6's public host API (nccl.h), written from the API
 * reference (docs.nvidia.com/deeplearning/nccl, "NCCL API") and the exported symbols of the nvidia-nccl-cu13 2.32.6
 * wheel; types, values and struct layouts are NCCL's, so programs built against NCCL's header run on ours and the
 * other way round. The device API's host entry points (nccl_device/host.h) are served too; their types are private
 * to the shim (shim/src/device_api.hpp). C99: tests/shim compiles a C file against this header. */
#ifndef NCCL_H_
#define NCCL_H_

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#if CUDART_VERSION >= 11000
#include <cuda_bf16.h>
#endif
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define NCCL_MAJOR 2
#define NCCL_MINOR 32
#define NCCL_PATCH 6
#define NCCL_SUFFIX ""

#define NCCL_VERSION_CODE 23206
#define NCCL_VERSION(X, Y, Z) (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z) : (X) * 10000 + (Y) * 100 + (Z))

#ifdef __cplusplus
extern "C" {
#endif

/* Handles */
typedef struct ncclComm* ncclComm_t;
typedef struct ncclWindow_vidmem* ncclWindow_t;
#define NCCL_COMM_NULL NULL

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;

/* Result codes */
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclTimeout = 8,
  ncclNumResults = 9
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNDEF_FLOAT -1.0f

/* Magic value of the versioned structs below (set by their initializers) */
#define NCCL_API_MAGIC 0xcafebeef

/* ncclCommWindowRegister flags */
#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_STRICT_ORDERING 0x02
#define NCCL_WIN_GIN_ONLY 0x04
#define NCCL_WIN_CFT_COUNTED 0x08
#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

/* CTA policy (ncclConfig_t.CTAPolicy, ncclCollConfig_t.CTAPolicy) */
#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02

/* ncclCommShrink flags */
#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01

/* ncclCommRevoke flags (must be 0) */
#define NCCL_REVOKE_DEFAULT 0x00

/* ncclConfig_t.hostCftMode */
typedef enum {
  ncclHostCftDefault = NCCL_CONFIG_UNDEF_INT,
  ncclHostCftEnable = 1,
  ncclHostCftDisable = 2,
  ncclHostCftFallback = 3
} ncclHostCftMode_t;

/* ncclConfig_t.nvlsHostMode: bits that turn host-side NVLS components off */
typedef enum {
  ncclNvlsHostModeDefault = NCCL_CONFIG_UNDEF_INT,
  ncclNvlsHostModeEnable = 0,
  ncclNvlsHostModeDisableTransport = 1 << 0,
  ncclNvlsHostModeDisableSymmetricMultimem = 1 << 1,
  ncclNvlsHostModeDisable = INT_MAX
} ncclNvlsHostMode_t;

/* Communicator configuration (version 2.31 layout). Append-only: a caller's older, shorter struct is read up to
 * its size; fields newer than its version are ignored. Initialize with NCCL_CONFIG_INITIALIZER. */
typedef struct ncclConfig_v23100 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  int splitShare;
  int trafficClass;
  const char* commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
  int graphUsageMode;
  int numRmaCtx;
  int maxP2pPeers;
  int graphStreamOrdering;
  int launchOrderImplicit;
  int numRmaSig;
  int rmaEagerInit;
  int hostCftMode;
  int nvlsHostMode;
} ncclConfig_t;

#define NCCL_CONFIG_INITIALIZER                                                                                       \
  {                                                                                                                   \
    sizeof(ncclConfig_t), NCCL_API_MAGIC, NCCL_VERSION_CODE, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,            \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT,                   \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,                   \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,                   \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,                   \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,                   \
        NCCL_CONFIG_UNDEF_INT                                                                                         \
  }

/* A vendor extension option of ncclCollConfig_t (a NULL-terminated list; NCCL itself ignores every one). */
typedef struct ncclConfigExt {
  struct ncclConfigExt* next;
  struct {
    int vendorId;
    int optionId;
  } key;
  union {
    int i;
    const char* s;
    void* raw;
  } val;
} ncclConfigExt_t;

/* Per-call configuration of the nccl*Config collectives (version 2.32 layout, append-only). Every rank must pass
 * the same values. Initialize with NCCL_COLLCONFIG_INITIALIZER. */
typedef struct ncclCollConfig_v23200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  ncclConfigExt_t* ext;
  int minCTAs;
  int maxCTAs;
  int nvlsCTAs;
  int cgaClusterSize;
  const char* algSelection; /* NCCL_ALGO syntax; NULL or "" selects automatically */
  int forceAlgSelection;    /* 1: a selection that cannot be met is an error */
  int CTAPolicy;
  uint64_t userProfilerTag;
  cudaEvent_t launchCompletionEvent;
} ncclCollConfig_t;

#define NCCL_COLLCONFIG_INITIALIZER                                                                                   \
  {                                                                                                                   \
    sizeof(ncclCollConfig_t), NCCL_API_MAGIC, NCCL_VERSION_CODE, NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT,        \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR, 1,                \
        NCCL_CONFIG_UNDEF_INT, 0, NCCL_CONFIG_UNDEF_PTR                                                               \
  }

/* ncclGroupSimulateEnd's answer */
typedef struct ncclSimInfo_v22200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime;
} ncclSimInfo_t;

#define NCCL_SIM_INFO_INITIALIZER { sizeof(ncclSimInfo_t), 0x74685283, NCCL_VERSION_CODE, NCCL_UNDEF_FLOAT }

/* Reduction operators */
typedef enum { ncclNumOps_dummy = 5 } ncclRedOp_dummy_t;
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  ncclNumOps = 5,
  ncclMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(ncclRedOp_dummy_t))
} ncclRedOp_t;

/* Data types */
typedef enum {
  ncclInt8 = 0, ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2, ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6, ncclHalf = 6,
  ncclFloat32 = 7, ncclFloat = 7,
  ncclFloat64 = 8, ncclDouble = 8,
  ncclBfloat16 = 9,
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
  ncclNumTypes = 12
} ncclDataType_t;

/* Where a PreMulSum scalar lives */
typedef enum { ncclScalarDevice = 0, ncclScalarHostImmediate = 1 } ncclScalarResidence_t;

/* ncclCommSuspend flags */
#define NCCL_SUSPEND_MEM 0x01

/* ncclCommMemStats statistics */
typedef enum {
  ncclStatGpuMemSuspend = 0,   /* bytes that ncclCommSuspend(NCCL_SUSPEND_MEM) releases */
  ncclStatGpuMemSuspended = 1, /* 1 while suspended, else 0 */
  ncclStatGpuMemPersist = 2,   /* bytes held for the communicator's lifetime */
  ncclStatGpuMemTotal = 3      /* all device memory the communicator holds */
} ncclCommMemStat_t;

/* One entry of ncclWaitSignal's list: wait for opCnt signals from peer (sigIdx and ctx must be 0). */
typedef struct {
  int opCnt;
  int peer;
  int sigIdx;
  int ctx;
} ncclWaitSignalDesc_t;

/* Parameter handles (ncclParam*) */
typedef struct ncclParamHandle* ncclParamHandle_t;

/* ncclSetEncryption */
typedef enum { NCCL_ENCRYPTION_MODE_NONE = 0, NCCL_ENCRYPTION_MODE_PSK = 1 } ncclEncryptionMode_t;

typedef struct ncclEncryptionConfig_v23200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int mode;
  const char* psk;
} ncclEncryptionConfig_t;

#define NCCL_ENCRYPTION_CONFIG_INITIALIZER \
  { sizeof(ncclEncryptionConfig_t), NCCL_API_MAGIC, NCCL_VERSION_CODE, NCCL_ENCRYPTION_MODE_NONE, NCCL_CONFIG_UNDEF_PTR }

/* Every entry point has a pnccl* twin (NCCL's profiling interface): GENIE_NCCL_DECL declares both. */
#define GENIE_NCCL_DECL(ret, name, args) ret name args; ret p##name args;

/* Memory */
GENIE_NCCL_DECL(ncclResult_t, ncclMemAlloc, (void** ptr, size_t size))
GENIE_NCCL_DECL(ncclResult_t, ncclMemFree, (void* ptr))

/* Version, ids, errors */
GENIE_NCCL_DECL(ncclResult_t, ncclGetVersion, (int* version))
GENIE_NCCL_DECL(ncclResult_t, ncclGetUniqueId, (ncclUniqueId* uniqueId))
GENIE_NCCL_DECL(const char*, ncclGetErrorString, (ncclResult_t result))
GENIE_NCCL_DECL(const char*, ncclGetLastError, (ncclComm_t comm))
GENIE_NCCL_DECL(void, ncclResetDebugInit, (void))

/* Communicators */
GENIE_NCCL_DECL(ncclResult_t, ncclCommInitRankConfig,
                (ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclCommInitRank, (ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank))
GENIE_NCCL_DECL(ncclResult_t, ncclCommInitAll, (ncclComm_t* comm, int ndev, const int* devlist))
GENIE_NCCL_DECL(ncclResult_t, ncclCommInitRankScalable,
                (ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds, ncclConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclCommFinalize, (ncclComm_t comm))
GENIE_NCCL_DECL(ncclResult_t, ncclCommDestroy, (ncclComm_t comm))
GENIE_NCCL_DECL(ncclResult_t, ncclCommAbort, (ncclComm_t comm))
GENIE_NCCL_DECL(ncclResult_t, ncclCommRevoke, (ncclComm_t comm, int revokeFlags))
GENIE_NCCL_DECL(ncclResult_t, ncclCommSplit,
                (ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclCommShrink,
                (ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                 ncclConfig_t* config, int shrinkFlags))
/* Growing: the existing ranks' root asks for an id (one unconsumed id at a time, each used once), every existing
 * rank calls ncclCommGrow with rank -1 (only the root passes the id), each new rank with comm NULL, the id and the
 * rank it is given. */
GENIE_NCCL_DECL(ncclResult_t, ncclCommGetUniqueId, (ncclComm_t comm, ncclUniqueId* uniqueId))
GENIE_NCCL_DECL(ncclResult_t, ncclCommGrow,
                (ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm,
                 ncclConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclCommGetAsyncError, (ncclComm_t comm, ncclResult_t* asyncError))
GENIE_NCCL_DECL(ncclResult_t, ncclCommCount, (const ncclComm_t comm, int* count))
GENIE_NCCL_DECL(ncclResult_t, ncclCommCuDevice, (const ncclComm_t comm, int* device))
GENIE_NCCL_DECL(ncclResult_t, ncclCommUserRank, (const ncclComm_t comm, int* rank))
GENIE_NCCL_DECL(ncclResult_t, ncclCommSuspend, (ncclComm_t comm, int flags))
GENIE_NCCL_DECL(ncclResult_t, ncclCommResume, (ncclComm_t comm))
GENIE_NCCL_DECL(ncclResult_t, ncclCommMemStats, (ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value))

/* Registration and windows */
GENIE_NCCL_DECL(ncclResult_t, ncclCommRegister, (const ncclComm_t comm, void* buff, size_t size, void** handle))
GENIE_NCCL_DECL(ncclResult_t, ncclCommDeregister, (const ncclComm_t comm, void* handle))
GENIE_NCCL_DECL(ncclResult_t, ncclCommWindowRegister,
                (ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags))
GENIE_NCCL_DECL(ncclResult_t, ncclCommWindowDeregister, (ncclComm_t comm, ncclWindow_t win))
GENIE_NCCL_DECL(ncclResult_t, ncclWinGetUserPtr, (ncclComm_t comm, ncclWindow_t win, void** outUserPtr))

/* Reduction operators */
GENIE_NCCL_DECL(ncclResult_t, ncclRedOpCreatePreMulSum,
                (ncclRedOp_t* op, void* scalar, ncclDataType_t datatype, ncclScalarResidence_t residence,
                 ncclComm_t comm))
GENIE_NCCL_DECL(ncclResult_t, ncclRedOpDestroy, (ncclRedOp_t op, ncclComm_t comm))

/* Collectives */
GENIE_NCCL_DECL(ncclResult_t, ncclReduce,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root,
                 ncclComm_t comm, cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclBcast,
                (void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclBroadcast,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                 cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclAllReduce,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                 ncclComm_t comm, cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclReduceScatter,
                (const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op,
                 ncclComm_t comm, cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclAllGather,
                (const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype, ncclComm_t comm,
                 cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclAlltoAll,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                 cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclGather,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                 ncclComm_t comm, cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclScatter,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                 ncclComm_t comm, cudaStream_t stream))

/* Collectives with a per-call configuration (config NULL: the plain call) */
GENIE_NCCL_DECL(ncclResult_t, ncclAllReduceConfig,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                 ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclBroadcastConfig,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                 cudaStream_t stream, const ncclCollConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclReduceConfig,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root,
                 ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclAllGatherConfig,
                (const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype, ncclComm_t comm,
                 cudaStream_t stream, const ncclCollConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclReduceScatterConfig,
                (const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op,
                 ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclAlltoAllConfig,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                 cudaStream_t stream, const ncclCollConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclGatherConfig,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                 ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config))
GENIE_NCCL_DECL(ncclResult_t, ncclScatterConfig,
                (const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                 ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config))

/* Two-sided point-to-point */
GENIE_NCCL_DECL(ncclResult_t, ncclSend,
                (const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                 cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclRecv,
                (void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                 cudaStream_t stream))

/* One-sided: write into a peer's registered window and raise its signal; wait for signals. */
GENIE_NCCL_DECL(ncclResult_t, ncclPutSignal,
                (const void* localbuff, size_t count, ncclDataType_t datatype, int peer, ncclWindow_t peerWin,
                 size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclSignal,
                (int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream))
GENIE_NCCL_DECL(ncclResult_t, ncclWaitSignal,
                (int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm, cudaStream_t stream))

/* Groups */
GENIE_NCCL_DECL(ncclResult_t, ncclGroupStart, (void))
GENIE_NCCL_DECL(ncclResult_t, ncclGroupEnd, (void))
GENIE_NCCL_DECL(ncclResult_t, ncclGroupSimulateEnd, (ncclSimInfo_t* simInfo))

/* Parameters: handle-based typed reads, key-based string reads, the list of keys, a dump to the log */
GENIE_NCCL_DECL(ncclResult_t, ncclParamBind, (ncclParamHandle_t* out, const char* key))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetI8, (ncclParamHandle_t h, int8_t* out))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetI16, (ncclParamHandle_t h, int16_t* out))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetI32, (ncclParamHandle_t h, int32_t* out))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetI64, (ncclParamHandle_t h, int64_t* out))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetU8, (ncclParamHandle_t h, uint8_t* out))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetU16, (ncclParamHandle_t h, uint16_t* out))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetU32, (ncclParamHandle_t h, uint32_t* out))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetU64, (ncclParamHandle_t h, uint64_t* out))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetStr, (ncclParamHandle_t h, const char** out))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGet, (ncclParamHandle_t h, void* out, int maxLen, int* len))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetParameter, (const char* key, const char** value, int* valueLen))
GENIE_NCCL_DECL(ncclResult_t, ncclParamGetAllParameterKeys, (const char*** table, int* tableLen))
GENIE_NCCL_DECL(void, ncclParamDumpAll, (void))

/* Encryption of NCCL's TCP sockets */
GENIE_NCCL_DECL(ncclResult_t, ncclSetEncryption, (const ncclEncryptionConfig_t* config))

#undef GENIE_NCCL_DECL

#ifdef __cplusplus
}
#endif

#endif /* NCCL_H_ */
