// Package hip is a small pure-Go binding to the HIP runtime of AMD's ROCm
// (libamdhip64.so), for launching compiled code objects on AMD GPUs such as
// the MI300X (gfx942).
//
// Like runtime/cuda it needs no cgo: the library is opened with dlopen at
// run time through purego, on first use. A binary built with CGO_ENABLED=0
// starts on machines without ROCm, and Available says plainly why HIP
// cannot be used there.
//
// Every failing HIP call comes back as an *Error naming the call, the HIP
// error name and, where one is involved, the kernel. Nothing in this
// package panics on a HIP failure, and every call on a device that was not
// opened returns an error.
//
// HIP keeps a current device per OS thread and goroutines migrate between
// threads, so every call that needs the device pins the goroutine to its
// thread and makes the device current first.
package hip
