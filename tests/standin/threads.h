// The CUDA stand-in's execution model (threads.cpp), as the driver stand-in (cuda.cpp) calls it.
#pragma once
#include <string>

#include "standin_api.h"

// Run a kernel's grid: `call` per thread on the argument blob, the module's __shared__ section
// [shared_lo, shared_hi) poisoned before each block. "" or why the kernel failed.
std::string standin_threads_run(standin_call_fn call, char *shared_lo, char *shared_hi, standin_dim3 grid,
                                standin_dim3 block, const unsigned char *blob);
// The table a compiled module is initialised with (`translate`: device address to backing memory).
standin_api *standin_threads_api(int (*translate)(const void *, void **));
