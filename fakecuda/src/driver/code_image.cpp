// SPDX-License-Identifier: Apache-2.0
// Device code images: the kernel and variable names of cubins (ELF), PTX text and fat binaries, read without
// trusting their headers (cuModuleLoadData and cudaLibraryLoadData give no image size).
#include "genie/fakecuda/code_image.hpp"

#include <elf.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string_view>

namespace genie::fakecuda {
namespace {

// Fat binary magics (fatbinary_section.h: FATBINC_MAGIC of the wrapper nvcc's host code registers; the magic of
// the fat binary header that `nvcc --fatbin` writes).
constexpr uint32_t kFatbinWrapperMagic = 0x466243b1u;
constexpr uint32_t kFatbinMagic = 0xba55ed50u;
// Fat binary entry kinds and the flag of a compressed payload (fatbin entry header as documented by
// n-eiling/cuda-fatbin-decompression, fatbin-decompress.h: FATBIN_FLAG_COMPRESS).
constexpr uint16_t kFatbinKindPtx = 1;
constexpr uint16_t kFatbinKindElf = 2;
constexpr uint64_t kFatbinFlagCompressed = 0x2000;
// st_other bit of a cubin's kernel entry symbols (readelf shows "[<other>: 10]" on every __global__ function and on
// no __device__ one, with and without -rdc; cuobjdump's STO_CUDA_ENTRY).
constexpr unsigned char kStoCudaEntry = 0x10;
// Largest offset or table a cubin's headers may name before the image is taken for something else (a kernel's
// cubin is kilobytes to megabytes; this only bounds what a corrupt header could make us allocate).
constexpr uint64_t kMaxCubinTable = uint64_t{256} << 20;

#pragma pack(push, 1)
struct FatbinHeader {  // the fat binary's own header
  uint32_t magic;
  uint16_t version;
  uint16_t header_size;
  uint64_t fat_size;  ///< bytes of entries after the header
};
struct FatbinEntry {  // one entry (a PTX text or a cubin for one architecture)
  uint16_t kind;
  uint16_t unknown1;
  uint32_t header_size;  ///< the payload starts this many bytes after the entry header
  uint64_t size;         ///< payload bytes
  uint32_t compressed_size;
  uint32_t unknown2;
  uint16_t minor;
  uint16_t major;
  uint32_t arch;
  uint32_t obj_name_offset;
  uint32_t obj_name_len;
  uint64_t flags;
  uint64_t zero;
  uint64_t decompressed_size;
};
struct FatbinWrapper {  // __fatBinC_Wrapper_t
  int32_t magic;
  int32_t version;
  const void* data;
  void* filename_or_fatbins;
};
#pragma pack(pop)

// Kernel info attributes (".nv.info.<kernel>" sections, type SHT_CUDA_INFO): each is a format byte, an attribute
// byte and, for EIFMT_SVAL, a 16-bit payload size and the payload; the other formats carry a 16-bit value. Layout
// as cuobjdump -elf prints it and as the cubins ptxas 13.0 writes for Triton kernels (checked by hand:
// "EIATTR_KPARAM_INFO Index 0 Ordinal 2 Offset 0x10 Size 0x4").
constexpr uint32_t kShtCudaInfo = 0x70000000u;
constexpr unsigned char kEifmtSval = 0x04;
constexpr unsigned char kEiattrKparamInfo = 0x17;
// The KPARAM_INFO payload: u32 index, u16 ordinal, u16 offset, u32 flags whose bits 18-31 are the size in bytes.
constexpr size_t kKparamInfoBytes = 12;
constexpr unsigned kKparamSizeShift = 18;
constexpr uint32_t kKparamSizeMask = 0x3fff;

/// Copies `n` bytes at `src` in this process into `dst`, or returns false when any of them is not mapped
/// (process_vm_readv reports EFAULT where a plain read would fault).
bool copy_mapped(void* dst, const void* src, size_t n) {
  if (n == 0) return true;
  iovec local{dst, n};
  iovec remote{const_cast<void*>(src), n};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

/// Bytes of one PTX scalar type (".u32" -> 4), 0 when `t` is not one.
size_t ptx_type_bytes(std::string_view t) {
  if (t.size() < 3 || t[0] != '.') return 0;
  const std::string_view bits = t.substr(2);
  if (std::string_view("bsuf").find(t[1]) == std::string_view::npos) return 0;
  if (bits == "8") return 1;
  if (bits == "16") return 2;
  if (bits == "32") return 4;
  if (bits == "64") return 8;
  return 0;
}

/// Global and constant variables of a PTX text: `[.visible] .global|.const [.align N] .type name[[N]]...;`
/// (initializers are not read: such a variable starts zeroed). `.extern` declarations are skipped.
void ptx_variables(std::string_view text, std::map<std::string, CodeVariable>* out) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find_first_of(";\n", pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view stmt = text.substr(pos, eol - pos);
    pos = eol + 1;
    // Tokens up to an initializer.
    if (size_t eq = stmt.find('='); eq != std::string_view::npos) stmt = stmt.substr(0, eq);
    std::vector<std::string_view> tok;
    for (size_t i = 0; i < stmt.size();) {
      while (i < stmt.size() && std::isspace(static_cast<unsigned char>(stmt[i]))) ++i;
      size_t j = i;
      while (j < stmt.size() && !std::isspace(static_cast<unsigned char>(stmt[j]))) ++j;
      if (j > i) tok.push_back(stmt.substr(i, j - i));
      i = j;
    }
    size_t k = 0;
    if (k < tok.size() && (tok[k] == ".visible" || tok[k] == ".weak")) ++k;
    if (k >= tok.size() || (tok[k] != ".global" && tok[k] != ".const")) continue;
    ++k;
    size_t elem = 0;
    for (; k < tok.size() && tok[k][0] == '.'; ++k) {
      if (tok[k] == ".align")
        ++k;  // skip its operand
      else if (size_t b = ptx_type_bytes(tok[k]); b != 0)
        elem = b;
    }
    if (elem == 0 || k >= tok.size()) continue;
    std::string_view decl = tok[k];
    size_t count = 1;
    size_t br = decl.find('[');
    std::string name(decl.substr(0, br));
    while (br != std::string_view::npos) {
      size_t close = decl.find(']', br);
      if (close == std::string_view::npos) break;
      count *=
          static_cast<size_t>(std::strtoull(std::string(decl.substr(br + 1, close - br - 1)).c_str(), nullptr, 10));
      br = decl.find('[', close);
    }
    if (!name.empty() && count > 0) (*out)[name] = CodeVariable{elem * count, {}};
  }
}

/// Entry names (".entry name(") and variables of a PTX text of `n` bytes, or false when it is not PTX text.
bool read_ptx(const char* text, size_t n, CodeImage* out) {
  std::string_view ptx(text, n);
  size_t first = ptx.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || (ptx[first] != '/' && ptx[first] != '.')) return false;
  for (size_t q = ptx.find(".entry"); q != std::string_view::npos; q = ptx.find(".entry", q + 6)) {
    size_t p = q + 6;
    if (p >= ptx.size() || (ptx[p] != ' ' && ptx[p] != '\t')) continue;
    while (p < ptx.size() && (ptx[p] == ' ' || ptx[p] == '\t')) ++p;
    size_t e = p;
    while (e < ptx.size() &&
           (std::isalnum(static_cast<unsigned char>(ptx[e])) || ptx[e] == '_' || ptx[e] == '$' || ptx[e] == '.'))
      ++e;
    if (e > p) out->entries.emplace(ptx.substr(p, e - p));
  }
  ptx_variables(ptx, &out->variables);
  out->names_known = true;
  return true;
}

/// Kernel entries and variables of an ELF cubin (64-bit, as nvcc and ptxas write them). Entries: the global
/// functions of its symbol table marked as entries (kStoCudaEntry in st_other) that have their own ".text.<name>"
/// section; device functions are local, or global without the mark under -rdc (nvcc 13.0 cubins, checked with
/// readelf). Variables: the objects (local or global) in the .nv.global* and .nv.constant* sections. False when the
/// image is not such an ELF file, or its headers point outside the memory it is in or past kMaxCubinTable.
bool read_elf(const unsigned char* image, CodeImage* out) {
  Elf64_Ehdr eh;
  if (!copy_mapped(&eh, image, sizeof(eh))) return false;
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shoff < sizeof(eh) ||
      eh.e_shoff > kMaxCubinTable || eh.e_shstrndx >= eh.e_shnum)
    return false;
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  if (!copy_mapped(sh.data(), image + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr))) return false;
  // One section's bytes, copied (false when out of bounds).
  auto bytes_of = [&](const Elf64_Shdr& h, std::vector<char>* v) {
    if (h.sh_offset > kMaxCubinTable || h.sh_size > kMaxCubinTable) return false;
    v->resize(h.sh_size);
    return copy_mapped(v->data(), image + h.sh_offset, h.sh_size);
  };
  // The NUL-terminated string at `off` of a string table.
  auto str_at = [](const std::vector<char>& t, uint64_t off) -> std::string {
    if (off >= t.size()) return {};
    return std::string(t.data() + off, strnlen(t.data() + off, t.size() - off));
  };
  std::vector<char> names;
  if (!bytes_of(sh[eh.e_shstrndx], &names)) return false;
  std::vector<std::string> section_names;
  std::set<std::string> sections;
  for (const Elf64_Shdr& h : sh) {
    section_names.push_back(str_at(names, h.sh_name));
    sections.insert(section_names.back());
  }
  // Kernel info: the parameter layout of each kernel.
  static constexpr std::string_view kInfoPrefix = ".nv.info.";
  for (size_t i = 0; i < sh.size(); ++i) {
    const std::string& sec = section_names[i];
    if (sh[i].sh_type != kShtCudaInfo || sec.size() <= kInfoPrefix.size() || sec.rfind(kInfoPrefix, 0) != 0) continue;
    std::vector<char> info;
    if (!bytes_of(sh[i], &info)) continue;
    auto params = read_kernel_params(reinterpret_cast<const unsigned char*>(info.data()), info.size());
    if (!params.empty()) out->params[sec.substr(kInfoPrefix.size())] = std::move(params);
  }
  for (const Elf64_Shdr& h : sh) {
    if (h.sh_type != SHT_SYMTAB || h.sh_entsize != sizeof(Elf64_Sym) || h.sh_link >= sh.size()) continue;
    std::vector<char> syms, strs;
    if (!bytes_of(h, &syms) || !bytes_of(sh[h.sh_link], &strs)) return false;
    for (size_t i = 0; i + sizeof(Elf64_Sym) <= syms.size(); i += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, syms.data() + i, sizeof(sym));
      const int bind = ELF64_ST_BIND(sym.st_info);
      const std::string name = str_at(strs, sym.st_name);
      if (name.empty()) continue;
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC) {
        if (bind == STB_GLOBAL && (sym.st_other & kStoCudaEntry) != 0 && sections.count(".text." + name))
          out->entries.insert(name);
      } else if (ELF64_ST_TYPE(sym.st_info) == STT_OBJECT && sym.st_size > 0 && sym.st_shndx < sh.size()) {
        // Whole-program cubins make their variables local; cuModuleGetGlobal still finds them by name.
        const std::string& sec = section_names[sym.st_shndx];
        if (sec.rfind(".nv.global", 0) != 0 && sec.rfind(".nv.constant", 0) != 0) continue;
        CodeVariable v;
        v.size = sym.st_size;
        const Elf64_Shdr& vs = sh[sym.st_shndx];
        if (vs.sh_type == SHT_PROGBITS && sym.st_value <= vs.sh_size && sym.st_size <= vs.sh_size - sym.st_value &&
            vs.sh_offset <= kMaxCubinTable) {
          v.init.resize(sym.st_size);
          if (!copy_mapped(v.init.data(), image + vs.sh_offset + sym.st_value, sym.st_size)) v.init.clear();
        }
        out->variables[name] = std::move(v);
      }
    }
  }
  out->names_known = true;
  return true;
}

}  // namespace

std::vector<KernelParam> read_kernel_params(const unsigned char* info, size_t n) {
  std::map<uint32_t, KernelParam> by_ordinal;
  size_t p = 0;
  while (p + 4 <= n) {
    const unsigned char fmt = info[p], attr = info[p + 1];
    if (fmt == 0 || fmt > kEifmtSval) return {};  // not an attribute list
    if (fmt != kEifmtSval) {
      p += 4;
      continue;
    }
    uint16_t size = 0;
    std::memcpy(&size, info + p + 2, 2);
    if (size > n - p - 4) return {};
    const unsigned char* payload = info + p + 4;
    if (attr == kEiattrKparamInfo) {
      if (size < kKparamInfoBytes) return {};
      uint16_t ordinal = 0, offset = 0;
      uint32_t flags = 0;
      std::memcpy(&ordinal, payload + 4, 2);
      std::memcpy(&offset, payload + 6, 2);
      std::memcpy(&flags, payload + 8, 4);
      const uint32_t bytes = (flags >> kKparamSizeShift) & kKparamSizeMask;
      if (bytes == 0 || !by_ordinal.emplace(ordinal, KernelParam{offset, bytes}).second) return {};
    }
    p += 4 + size;
  }
  std::vector<KernelParam> out;
  for (const auto& [ordinal, param] : by_ordinal) {
    if (ordinal != out.size()) return {};  // a gap: the layout is incomplete
    out.push_back(param);
  }
  return out;
}

bool read_fatbin(const unsigned char* fatbin, size_t size, CodeImage* out) {
  FatbinHeader fh;
  if (size < sizeof(fh)) return false;
  std::memcpy(&fh, fatbin, sizeof(fh));
  if (fh.magic != kFatbinMagic || fh.header_size < sizeof(fh)) return false;
  const size_t end = static_cast<size_t>(std::min<uint64_t>(size, uint64_t{fh.header_size} + fh.fat_size));
  for (size_t off = fh.header_size; off + sizeof(FatbinEntry) <= end;) {
    FatbinEntry e;
    std::memcpy(&e, fatbin + off, sizeof(e));
    if (e.header_size < sizeof(uint16_t) * 2 + sizeof(uint32_t) + sizeof(uint64_t) || e.size > end) break;
    const size_t payload = off + e.header_size;
    if (payload > end || e.size > end - payload) break;
    const bool compressed = (e.flags & kFatbinFlagCompressed) != 0;
    if (!compressed && e.kind == kFatbinKindElf && e.size >= SELFMAG &&
        std::memcmp(fatbin + payload, ELFMAG, SELFMAG) == 0) {
      read_elf(fatbin + payload, out);
    } else if (!compressed && e.kind == kFatbinKindPtx) {
      const char* text = reinterpret_cast<const char*>(fatbin + payload);
      read_ptx(text, strnlen(text, e.size), out);
    }
    off = payload + e.size;
  }
  return true;
}

Result<CodeImage> read_code_image(const void* image) {
  if (image == nullptr) return invalid_argument("no image");
  const auto* bytes = static_cast<const unsigned char*>(image);
  CodeImage out;
  unsigned char head[4] = {};
  if (!copy_mapped(head, bytes, 1)) return invalid_argument("image not readable");
  // Short-circuit on the first byte so a short PTX string is never read past its NUL.
  if (head[0] == 0x7f && copy_mapped(head, bytes, 4) && std::memcmp(head, ELFMAG, SELFMAG) == 0) {
    // A cubin names its kernels; one we cannot read stays a module of any function.
    read_elf(bytes, &out);
    return out;
  }
  uint32_t magic = 0;
  if ((head[0] == (kFatbinMagic & 0xffu) || head[0] == (kFatbinWrapperMagic & 0xffu)) &&
      copy_mapped(&magic, bytes, sizeof(magic)) && (magic == kFatbinMagic || magic == kFatbinWrapperMagic)) {
    const unsigned char* fat = bytes;
    if (magic == kFatbinWrapperMagic) {
      FatbinWrapper w;
      if (!copy_mapped(&w, bytes, sizeof(w))) return out;
      fat = static_cast<const unsigned char*>(w.data);
    }
    FatbinHeader fh;
    if (fat == nullptr || !copy_mapped(&fh, fat, sizeof(fh)) || fh.magic != kFatbinMagic) return out;
    const uint64_t total = uint64_t{fh.header_size} + fh.fat_size;
    if (total > kMaxCubinTable) return out;
    std::vector<unsigned char> copy(total);
    if (!copy_mapped(copy.data(), fat, copy.size())) return out;
    CodeImage read;
    read_fatbin(copy.data(), copy.size(), &read);
    if (read.names_known) out = std::move(read);
    return out;
  }
  const char* text = static_cast<const char*>(image);
  if (std::strncmp(text, kLinkedImageTag, sizeof(kLinkedImageTag) - 1) == 0) return out;
  if (!read_ptx(text, std::strlen(text), &out)) return invalid_argument("not a cubin, fat binary or PTX text");
  return out;
}

}  // namespace genie::fakecuda
