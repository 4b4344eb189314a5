// SPDX-License-Identifier: Apache-2.0
// Reading a device code image (cubin, PTX, fat binary): the kernels and __device__ variables it defines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::fakecuda {

/// Output of cuLinkComplete (driver_module.cpp): the tag, its NUL, then the linked inputs. Loading it gives a
/// module of any function (the inputs are not read).
inline constexpr char kLinkedImageTag[] = "GENIE-LINKED-IMAGE";

/// A __device__ (or __constant__, __managed__) variable of an image: its size and initial bytes (empty when the
/// variable lives in a NOBITS section, i.e. starts zeroed).
struct CodeVariable {
  size_t size = 0;
  std::vector<unsigned char> init;
};

/// One parameter of a kernel as its cubin's kernel info describes it (the EIATTR_KPARAM_INFO attribute of the
/// ".nv.info.<kernel>" section): where it lies in the parameter buffer and its size in bytes.
struct KernelParam {
  uint32_t offset = 0;
  uint32_t size = 0;
};

/// What a code image defines, as the driver reads it for cuModuleLoadData and cudaLibraryLoadData.
struct CodeImage {
  /// True when the image's kernel names could be read (a cubin, PTX text, or a fat binary with an uncompressed
  /// cubin or PTX entry); false for a compressed fat binary or a cuLinkComplete image, which load as modules of
  /// any name (the program only asks for names it compiled, so nothing is lost but the check).
  bool names_known = false;
  std::set<std::string> entries;  ///< kernel (`__global__`) names, mangled
  std::map<std::string, CodeVariable> variables;
  /// Parameter layouts of the kernels a cubin describes, by kernel name, in parameter order (kernelParams[i] points
  /// at parameter i). Absent for PTX text and for a kernel whose kernel info is missing or incomplete.
  std::map<std::string, std::vector<KernelParam>> params;
};

/// Reads the parameter layout from the payload of one ".nv.info.<kernel>" section of `n` bytes: the
/// EIATTR_KPARAM_INFO attributes (ordinal, offset, size). Empty when the section names none, an ordinal is missing
/// or repeated, or the attribute list is malformed.
std::vector<KernelParam> read_kernel_params(const unsigned char* info, size_t n);

/// Reads `image` (no size is given, as with cuModuleLoadData: an ELF or fat binary header bounds what is read,
/// and every read is checked against the process's mappings). kInvalidArgument when it is neither a cubin, a fat
/// binary (or its wrapper), PTX text nor a cuLinkComplete image. Thread-safe.
Result<CodeImage> read_code_image(const void* image);

/// Reads one fat binary entry list `fatbin` of `size` bytes already in memory (the part of read_code_image that
/// unit tests drive with hand-made binaries). Adds to `out`; false when it is not a fat binary.
bool read_fatbin(const unsigned char* fatbin, size_t size, CodeImage* out);

}  // namespace genie::fakecuda
