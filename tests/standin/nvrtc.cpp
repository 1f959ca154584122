// CPU stand-in for NVRTC (libnvrtc.so.12), a test instrument of `make test`: "compiles" a CUDA C
// program by compiling the same source with the host C++ compiler after kernel_prelude.h, into a
// shared module that the stand-in driver (cuda.cpp) loads and runs. The "PTX" it returns names that
// module. Modules are cached by a hash of source, options and prelude (CUDA_STANDIN_CACHE, else
// $TMPDIR/parlops-standin-$UID). Options: -D/-U/-I are passed on, --fmad=false becomes
// -ffp-contract=off, --gpu-architecture/-arch is accepted; anything else is refused as NVRTC would.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#ifndef STANDIN_SRC_DIR
#error "build with -DSTANDIN_SRC_DIR=<tests/standin>"
#endif

typedef int nvrtcResult;
enum { NV_OK = 0, NV_OOM = 1, NV_CREATE = 2, NV_INPUT = 3, NV_PROGRAM = 4, NV_OPTION = 5, NV_COMPILE = 6 };

struct Program {
  std::string src, name, ptx, log;
};

namespace {
uint64_t fnv(const std::string &s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}
std::string slurp(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
std::string cache_dir() {
  const char *c = getenv("CUDA_STANDIN_CACHE");
  std::string d;
  if (c && *c) d = c;
  else {
    const char *t = getenv("TMPDIR");
    d = std::string(t && *t ? t : "/tmp") + "/parlops-standin-" + std::to_string(getuid());
  }
  mkdir(d.c_str(), 0700);
  return d;
}
std::string quote(const std::string &s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}
int run(const std::string &cmd, std::string &out) {
  FILE *p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
} // namespace

extern "C" {

const char *nvrtcGetErrorString(nvrtcResult r) {
  switch (r) {
  case NV_OK: return "NVRTC_SUCCESS";
  case NV_OOM: return "NVRTC_ERROR_OUT_OF_MEMORY";
  case NV_CREATE: return "NVRTC_ERROR_PROGRAM_CREATION_FAILURE";
  case NV_INPUT: return "NVRTC_ERROR_INVALID_INPUT";
  case NV_PROGRAM: return "NVRTC_ERROR_INVALID_PROGRAM";
  case NV_OPTION: return "NVRTC_ERROR_INVALID_OPTION";
  case NV_COMPILE: return "NVRTC_ERROR_COMPILATION";
  default: return "NVRTC_ERROR_INTERNAL_ERROR";
  }
}
nvrtcResult nvrtcVersion(int *major, int *minor) {
  if (!major || !minor) return NV_INPUT;
  *major = 12;
  *minor = 9;
  return NV_OK;
}
static const int ARCHS[] = {75, 80, 86, 87, 89, 90};
nvrtcResult nvrtcGetNumSupportedArchs(int *n) {
  if (!n) return NV_INPUT;
  *n = (int)(sizeof ARCHS / sizeof *ARCHS);
  return NV_OK;
}
nvrtcResult nvrtcGetSupportedArchs(int *a) {
  if (!a) return NV_INPUT;
  memcpy(a, ARCHS, sizeof ARCHS);
  return NV_OK;
}
nvrtcResult nvrtcCreateProgram(Program **prog, const char *src, const char *name, int nh, const char *const *h,
                               const char *const *hn) {
  (void)h;
  (void)hn;
  if (!prog || !src || nh < 0) return NV_INPUT;
  if (nh > 0) return NV_INPUT; // parlops passes no headers
  *prog = new Program{src, name ? name : "default_program", "", ""};
  return NV_OK;
}
nvrtcResult nvrtcDestroyProgram(Program **prog) {
  if (!prog || !*prog) return NV_PROGRAM;
  delete *prog;
  *prog = nullptr;
  return NV_OK;
}
nvrtcResult nvrtcCompileProgram(Program *p, int nopt, const char *const *opts) {
  if (!p) return NV_PROGRAM;
  if (nopt < 0 || (nopt > 0 && !opts)) return NV_INPUT;
  std::string flags, arch = "compute_90";
  for (int i = 0; i < nopt; i++) {
    std::string o = opts[i] ? opts[i] : "";
    if (o.rfind("-D", 0) == 0 || o.rfind("-U", 0) == 0 || o.rfind("-I", 0) == 0) flags += " " + quote(o);
    else if (o == "--fmad=false" || o == "-fmad=false") flags += " -ffp-contract=off";
    else if (o == "--fmad=true" || o == "-fmad=true") flags += " -ffp-contract=fast";
    else if (o.rfind("--gpu-architecture=", 0) == 0) arch = o.substr(19);
    else if (o.rfind("-arch=", 0) == 0) arch = o.substr(6);
    else if (o == "-std=c++17" || o == "--std=c++17") {
    } else {
      p->log = "nvrtc (stand-in): error: unrecognized option " + o + "\n";
      return NV_OPTION;
    }
  }
  const std::string dir = STANDIN_SRC_DIR;
  const char *cxx_env = getenv("CXX");
  std::string cxx = cxx_env && *cxx_env ? cxx_env : "c++";
  std::string prelude = slurp(dir + "/kernel_prelude.h") + slurp(dir + "/standin_api.h");
  const std::string cxxflags = " -std=c++17 -O2 -fPIC -shared -fno-fast-math -Wno-attributes";
  // the key: everything the module depends on, this library's own build included
  uint64_t h = fnv(p->src, fnv(flags, fnv(prelude, fnv(cxx + cxxflags + __DATE__ " " __TIME__))));
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
  std::string cdir = cache_dir();
  std::string so = cdir + "/mod-" + hex + ".so", names_file = cdir + "/mod-" + hex + ".kernels";
  std::string names;
  if (access(so.c_str(), R_OK) != 0 || access(names_file.c_str(), R_OK) != 0) {
    std::string tmp = cdir + "/tmp-" + std::to_string(getpid()) + "-" + hex;
    {
      std::ofstream f(tmp + ".cu", std::ios::binary);
      f << p->src;
    }
    // the kernels' names, from the preprocessed source (macros may make them)
    std::string pre;
    int rc = run(cxx + " -E -P -x c++" + flags + " -D__global__=STANDIN_GLOBAL_MARK " + quote(tmp + ".cu") + " 2>&1",
                 pre);
    if (rc != 0) {
      p->log = pre;
      unlink((tmp + ".cu").c_str());
      return NV_COMPILE;
    }
    std::regex re("STANDIN_GLOBAL_MARK\\s+void\\s+([A-Za-z_][A-Za-z0-9_]*)\\s*\\(");
    std::vector<std::string> ks;
    for (auto it = std::sregex_iterator(pre.begin(), pre.end(), re); it != std::sregex_iterator(); ++it)
      ks.push_back((*it)[1]);
    std::ofstream w(tmp + ".cpp", std::ios::binary);
    w << "#include \"kernel_prelude.h\"\nconst standin_api *standin_rt;\n#line 1 \"" << p->name << "\"\n"
      << p->src << "\n#line 1 \"standin-launchers\"\nextern \"C\" {\n"
      << "extern char __start_standin_shared[] __attribute__((weak));\n"
      << "extern char __stop_standin_shared[] __attribute__((weak));\n"
      << "char *__standin_shared_lo = __start_standin_shared;\nchar *__standin_shared_hi = __stop_standin_shared;\n"
      << "void __standin_init(const standin_api *a) { standin_rt = a; }\n";
    for (auto &k : ks) {
      w << "long __standin_pack_" << k << "(void **p, unsigned char *b) { return standin::pack(" << k
        << ", p, b); }\n";
      w << "void __standin_call_" << k << "(const unsigned char *b) { standin::call(" << k << ", b); }\n";
      names += k + " ";
    }
    w << "}\n";
    w.close();
    std::string out;
    rc = run(cxx + cxxflags + flags + " -I" +
                 quote(dir) + " " + quote(tmp + ".cpp") + " -o " + quote(tmp + ".so") + " 2>&1",
             out);
    unlink((tmp + ".cu").c_str());
    unlink((tmp + ".cpp").c_str());
    if (rc != 0) {
      p->log = out;
      unlink((tmp + ".so").c_str());
      return NV_COMPILE;
    }
    {
      std::ofstream n(tmp + ".kernels");
      n << names;
    }
    rename((tmp + ".so").c_str(), so.c_str());
    rename((tmp + ".kernels").c_str(), names_file.c_str());
  } else {
    names = slurp(names_file);
  }
  p->ptx = "// parlops-standin-module " + so + "\n// .target " + arch + "\n// .entry " + names + "\n";
  p->log = "";
  return NV_OK;
}
nvrtcResult nvrtcGetPTXSize(Program *p, size_t *n) {
  if (!p) return NV_PROGRAM;
  if (!n) return NV_INPUT;
  *n = p->ptx.size() + 1;
  return NV_OK;
}
nvrtcResult nvrtcGetPTX(Program *p, char *out) {
  if (!p) return NV_PROGRAM;
  if (!out) return NV_INPUT;
  memcpy(out, p->ptx.c_str(), p->ptx.size() + 1);
  return NV_OK;
}
nvrtcResult nvrtcGetProgramLogSize(Program *p, size_t *n) {
  if (!p) return NV_PROGRAM;
  if (!n) return NV_INPUT;
  *n = p->log.size() + 1;
  return NV_OK;
}
nvrtcResult nvrtcGetProgramLog(Program *p, char *out) {
  if (!p) return NV_PROGRAM;
  if (!out) return NV_INPUT;
  memcpy(out, p->log.c_str(), p->log.size() + 1);
  return NV_OK;
}

} // extern "C"
