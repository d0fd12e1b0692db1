package cuda

// Streams order work and events time it. Streams are created blocking (flag
// 0) so the synchronous copies, which run on the legacy default stream,
// stay ordered with kernels launched on them.

// Stream is a CUDA stream. A nil *Stream means the default stream.
type Stream struct {
	d *Device
	h uintptr
}

// NewStream creates a stream on d.
func (d *Device) NewStream() (*Stream, error) {
	s := &Stream{d: d}
	err := d.do(func() error { return d.api.check("cuStreamCreate", d.api.cuStreamCreate(&s.h, 0)) })
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Stream) handle() uintptr {
	if s == nil {
		return 0
	}
	return s.h
}

// Synchronize waits for the work queued on s.
func (s *Stream) Synchronize() error {
	return s.d.do(func() error {
		return s.d.api.check("cuStreamSynchronize", s.d.api.cuStreamSynchronize(s.h))
	})
}

// Done reports whether all work queued on s has finished, without waiting.
func (s *Stream) Done() (bool, error) {
	var r int32
	err := s.d.do(func() error {
		r = s.d.api.cuStreamQuery(s.h)
		if r == resultNotReady {
			return nil
		}
		return s.d.api.check("cuStreamQuery", r)
	})
	return err == nil && r == resultSuccess, err
}

// Close destroys s once its queued work completes.
func (s *Stream) Close() error {
	if s == nil || s.h == 0 {
		return nil
	}
	h := s.h
	s.h = 0
	return s.d.do(func() error { return s.d.api.check("cuStreamDestroy_v2", s.d.api.cuStreamDestroy(h)) })
}

// Event marks a point in a stream, for timing and dependencies.
type Event struct {
	d *Device
	h uintptr
}

// NewEvent creates a timing-capable event on d.
func (d *Device) NewEvent() (*Event, error) {
	e := &Event{d: d}
	err := d.do(func() error { return d.api.check("cuEventCreate", d.api.cuEventCreate(&e.h, 0)) })
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Record marks e at the current end of s (nil: the default stream).
func (e *Event) Record(s *Stream) error {
	return e.d.do(func() error {
		return e.d.api.check("cuEventRecord", e.d.api.cuEventRecord(e.h, s.handle()))
	})
}

// Synchronize waits until e has been reached.
func (e *Event) Synchronize() error {
	return e.d.do(func() error {
		return e.d.api.check("cuEventSynchronize", e.d.api.cuEventSynchronize(e.h))
	})
}

// Close destroys e.
func (e *Event) Close() error {
	if e == nil || e.h == 0 {
		return nil
	}
	h := e.h
	e.h = 0
	return e.d.do(func() error { return e.d.api.check("cuEventDestroy_v2", e.d.api.cuEventDestroy(h)) })
}

// ElapsedTime is the time in milliseconds between two recorded events. It
// waits for end first, so callers need not synchronize.
func ElapsedTime(start, end *Event) (float32, error) {
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	var ms float32
	err := end.d.do(func() error {
		return end.d.api.check("cuEventElapsedTime", end.d.api.cuEventElapsedTime(&ms, start.h, end.h))
	})
	return ms, err
}
