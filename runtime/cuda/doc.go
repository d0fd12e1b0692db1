// Package cuda is a small pure-Go binding to the CUDA driver API and NVRTC.
//
// It exists so that tilego can compile and launch kernels without cgo: the
// driver (libcuda.so.1) and NVRTC (libnvrtc.so.*) are opened with dlopen at
// run time through purego, on first use. A binary built with CGO_ENABLED=0
// therefore starts on machines without a GPU, and Available reports plainly
// why CUDA cannot be used there.
//
// Every failing driver or NVRTC call comes back as an *Error naming the call,
// the CUDA error name and, where one is involved, the kernel. Nothing in this
// package panics on a CUDA failure.
//
// Devices use their primary context, so device pointers are shared with any
// other CUDA user in the process (PyTorch, CuPy, a C library). Because a
// CUDA context is current per OS thread and goroutines migrate between
// threads, every call that needs the context pins the goroutine to its thread
// and makes the context current first.
package cuda
