package hip

// The numbers this package hands to or reads from libamdhip64, checked
// against the values taken from ROCm's headers: enum hipDeviceAttribute_t
// and hipError_t (include/hip/hip_runtime_api.h), hipMemcpyKind and
// hipFunction_attribute (include/hip/driver_types.h), and the
// hipDeviceProp_t layouts (hip_runtime_api.h, hip_deprecated.h). They were
// read with a C compiler over the headers of ROCm 5.0.0, 5.7.0, 6.0.0 and
// HIP's 2024-10 develop branch (identical wherever defined) and compared
// by eye with the 2025 header in ROCm/rocm-systems.

import "testing"

func TestDeviceAttributeNumbers(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"hipDeviceAttributeClockRate", attrClockRate, 5},
		{"hipDeviceAttributeL2CacheSize", attrL2CacheSize, 19},
		{"hipDeviceAttributeComputeCapabilityMajor", attrComputeCapabilityMajor, 23},
		{"hipDeviceAttributeMaxThreadsPerBlock", attrMaxThreadsPerBlock, 56},
		{"hipDeviceAttributeMaxThreadsPerMultiProcessor", attrMaxThreadsPerMultiProc, 57},
		{"hipDeviceAttributeMemoryBusWidth", attrMemoryBusWidth, 59},
		{"hipDeviceAttributeMemoryClockRate", attrMemoryClockRate, 60},
		{"hipDeviceAttributeComputeCapabilityMinor", attrComputeCapabilityMinor, 61},
		{"hipDeviceAttributeMultiprocessorCount", attrMultiprocessorCount, 63},
		{"hipDeviceAttributeMaxRegistersPerBlock", attrMaxRegistersPerBlock, 71},
		{"hipDeviceAttributeMaxSharedMemoryPerBlock", attrMaxSharedMemoryPerBlock, 74},
		{"hipDeviceAttributeSharedMemPerMultiprocessor", attrSharedMemPerMultiprocessor, 76},
		{"hipDeviceAttributeWarpSize", attrWarpSize, 87},
		{"hipDeviceAttributeWallClockRate", attrWallClockRate, 10017},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, header says %d", c.name, c.got, c.want)
		}
	}
}

func TestMemcpyKinds(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"hipMemcpyHostToDevice", memcpyHostToDevice, 1},
		{"hipMemcpyDeviceToHost", memcpyDeviceToHost, 2},
		{"hipMemcpyDeviceToDevice", memcpyDeviceToDevice, 3},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, header says %d", c.name, c.got, c.want)
		}
	}
}

func TestFuncAttributes(t *testing.T) {
	for _, c := range []struct {
		name string
		got  FuncAttribute
		want int
	}{
		{"HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK", FuncMaxThreadsPerBlock, 0},
		{"HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES", FuncSharedSizeBytes, 1},
		{"HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES", FuncConstSizeBytes, 2},
		{"HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES", FuncLocalSizeBytes, 3},
		{"HIP_FUNC_ATTRIBUTE_NUM_REGS", FuncNumRegs, 4},
		{"HIP_FUNC_ATTRIBUTE_BINARY_VERSION", FuncBinaryVersion, 6},
		{"HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES", FuncMaxDynamicSharedSizeBytes, 8},
	} {
		if int(c.got) != c.want {
			t.Errorf("%s = %d, header says %d", c.name, c.got, c.want)
		}
	}
}

func TestErrorCodes(t *testing.T) {
	header := map[string]int{
		"hipSuccess": 0, "hipErrorInvalidValue": 1, "hipErrorOutOfMemory": 2,
		"hipErrorNotInitialized": 3, "hipErrorDeinitialized": 4, "hipErrorInvalidConfiguration": 9,
		"hipErrorInsufficientDriver": 35, "hipErrorInvalidDeviceFunction": 98, "hipErrorNoDevice": 100,
		"hipErrorInvalidDevice": 101, "hipErrorInvalidImage": 200, "hipErrorInvalidContext": 201,
		"hipErrorNoBinaryForGpu": 209, "hipErrorInvalidKernelFile": 218,
		"hipErrorSharedObjectSymbolNotFound": 302, "hipErrorInvalidHandle": 400, "hipErrorNotFound": 500,
		"hipErrorNotReady": 600, "hipErrorIllegalAddress": 700, "hipErrorLaunchOutOfResources": 701,
		"hipErrorLaunchTimeOut": 702, "hipErrorAssert": 710, "hipErrorLaunchFailure": 719,
		"hipErrorCooperativeLaunchTooLarge": 720, "hipErrorNotSupported": 801, "hipErrorUnknown": 999,
		"hipErrorRuntimeMemory": 1052, "hipErrorRuntimeOther": 1053,
	}
	if len(fallbackNames) != len(header) {
		t.Errorf("fallbackNames has %d codes, the table %d", len(fallbackNames), len(header))
	}
	for name, code := range header {
		if got := fallbackNames[code]; got != name {
			t.Errorf("fallbackNames[%d] = %q, header names it %s", code, got, name)
		}
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"hipSuccess", hipSuccess, 0},
		{"hipErrorInvalidValue", hipErrorInvalidValue, 1},
		{"hipErrorInsufficientDriver", hipErrorInsufficientDriver, 35},
		{"hipErrorNoDevice", hipErrorNoDevice, 100},
		{"hipErrorInvalidImage", hipErrorInvalidImage, 200},
		{"hipErrorNoBinaryForGpu", hipErrorNoBinaryForGpu, 209},
		{"hipErrorNotReady", hipErrorNotReady, 600},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, header says %d", c.name, c.got, c.want)
		}
	}
}

func TestPropsLayout(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"sizeof(hipDeviceProp_tR0600)", propsR0600Size, 1472},
		{"offsetof(hipDeviceProp_tR0600, gcnArchName)", propsR0600ArchNameOff, 1160},
		{"sizeof(hipDeviceProp_tR0000)", propsR0000Size, 792},
		{"offsetof(hipDeviceProp_tR0000, gcnArchName)", propsR0000ArchNameOff, 396},
		{"sizeof(gcnArchName)", propsArchNameLen, 256},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, header says %d", c.name, c.got, c.want)
		}
	}
	if propsBufSize < 2*propsR0600Size {
		t.Errorf("properties buffer of %d bytes leaves too little room past %d", propsBufSize, propsR0600Size)
	}
}
