package hip

// Streams order work and events time it. Streams are created with
// hipStreamCreate (blocking, hipStreamDefault), so they stay ordered with
// the null stream that the synchronous copies use.

import "fmt"

var errNilStream = fmt.Errorf("hip: nil or closed stream")

// Stream is a HIP stream. A nil *Stream passed to Launch means the null
// stream.
type Stream struct {
	d *Device
	h uintptr
}

// NewStream creates a stream on d.
func (d *Device) NewStream() (*Stream, error) {
	s := &Stream{d: d}
	err := d.do(func() error { return d.api.check("hipStreamCreate", d.api.hipStreamCreate(&s.h)) })
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

// device is the stream's device, or nil for a stream NewStream did not
// make or that was closed.
func (s *Stream) device() *Device {
	if s == nil || s.h == 0 {
		return nil
	}
	return s.d
}

// Synchronize waits for the work queued on s.
func (s *Stream) Synchronize() error {
	d := s.device()
	if d == nil {
		return errNilStream
	}
	return d.do(func() error {
		return d.api.check("hipStreamSynchronize", d.api.hipStreamSynchronize(s.h))
	})
}

// Done reports whether all work queued on s has finished, without waiting.
func (s *Stream) Done() (bool, error) {
	d := s.device()
	if d == nil {
		return false, errNilStream
	}
	var r int32
	err := d.do(func() error {
		r = d.api.hipStreamQuery(s.h)
		if r == hipErrorNotReady {
			return nil
		}
		return d.api.check("hipStreamQuery", r)
	})
	return err == nil && r == hipSuccess, err
}

// Close destroys s once its queued work completes. Closing a nil or
// already closed stream does nothing.
func (s *Stream) Close() error {
	d := s.device()
	if d == nil {
		return nil
	}
	err := d.do(func() error { return d.api.check("hipStreamDestroy", d.api.hipStreamDestroy(s.h)) })
	if err == nil {
		s.h = 0
	}
	return err
}

var errNilEvent = fmt.Errorf("hip: nil or closed event")

// Event marks a point in a stream, for timing and dependencies.
type Event struct {
	d *Device
	h uintptr
}

// NewEvent creates a timing-capable event on d.
func (d *Device) NewEvent() (*Event, error) {
	e := &Event{d: d}
	err := d.do(func() error { return d.api.check("hipEventCreate", d.api.hipEventCreate(&e.h)) })
	if err != nil {
		return nil, err
	}
	return e, nil
}

// device is the event's device, or nil for an event NewEvent did not make
// or that was closed.
func (e *Event) device() *Device {
	if e == nil || e.h == 0 {
		return nil
	}
	return e.d
}

// Record marks e at the current end of s (nil: the null stream).
func (e *Event) Record(s *Stream) error {
	d := e.device()
	if d == nil {
		return errNilEvent
	}
	return d.do(func() error {
		return d.api.check("hipEventRecord", d.api.hipEventRecord(e.h, s.handle()))
	})
}

// Synchronize waits until e has been reached.
func (e *Event) Synchronize() error {
	d := e.device()
	if d == nil {
		return errNilEvent
	}
	return d.do(func() error {
		return d.api.check("hipEventSynchronize", d.api.hipEventSynchronize(e.h))
	})
}

// Close destroys e. Closing a nil or already closed event does nothing.
func (e *Event) Close() error {
	d := e.device()
	if d == nil {
		return nil
	}
	err := d.do(func() error { return d.api.check("hipEventDestroy", d.api.hipEventDestroy(e.h)) })
	if err == nil {
		e.h = 0
	}
	return err
}

// ElapsedTime is the time in milliseconds between two recorded events. It
// waits for end first, so callers need not synchronize.
func ElapsedTime(start, end *Event) (float32, error) {
	if start.device() == nil {
		return 0, errNilEvent
	}
	if err := end.Synchronize(); err != nil {
		return 0, err
	}
	d := end.d
	var ms float32
	err := d.do(func() error {
		return d.api.check("hipEventElapsedTime", d.api.hipEventElapsedTime(&ms, start.h, end.h))
	})
	return ms, err
}
