/* SPDX-License-Identifier: Apache-2.0
 * shim/include/nccl.h is C99: this file compiles against it with -std=c99 -pedantic, and checks the initializers and
 * the layouts the ABI fixes (the sizes of NCCL 2.32.6's ncclConfig_t, ncclCollConfig_t and ncclEncryptionConfig_t
 * on x86-64, and the enum values clients compare against). */
#include <nccl.h>
#include <stddef.h>

#define STATIC_CHECK(name, cond) typedef char name[(cond) ? 1 : -1]

STATIC_CHECK(config_size, sizeof(ncclConfig_t) == 120);
STATIC_CHECK(collconfig_size, sizeof(ncclCollConfig_t) == 72);
STATIC_CHECK(collconfig_event, offsetof(ncclCollConfig_t, launchCompletionEvent) == 64);
STATIC_CHECK(encryption_size, sizeof(ncclEncryptionConfig_t) == 32);
STATIC_CHECK(timeout_value, ncclTimeout == 8 && ncclNumResults == 9);
STATIC_CHECK(version_code, NCCL_VERSION_CODE == 23206 && NCCL_VERSION(2, 32, 6) == 23206);
STATIC_CHECK(float8, ncclFloat8e5m2 == 11 && ncclNumTypes == 12);

int main(void) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  ncclCollConfig_t coll = NCCL_COLLCONFIG_INITIALIZER;
  ncclEncryptionConfig_t enc = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  ncclWaitSignalDesc_t desc = {1, 0, 0, 0};
  ncclResult_t (*fns[])(void) = {ncclGroupStart, ncclGroupEnd};
  (void)fns;
  (void)desc;
  return !(config.size == sizeof(config) && config.nvlsHostMode == NCCL_CONFIG_UNDEF_INT &&
           coll.forceAlgSelection == 1 && enc.mode == NCCL_ENCRYPTION_MODE_NONE && sim.estimatedTime < 0);
}
