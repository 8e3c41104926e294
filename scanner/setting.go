package scanner

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// DefaultTimeout is a scanner's time budget per screening when its Setting
// names none. In-process detectors take microseconds; the budget exists for
// the ones that call out (classifiers, moderation APIs).
const DefaultTimeout = 100 * time.Millisecond

// ErrInvalidSetting is wrapped by every *SettingError, the error of
// Setting.Validate.
var ErrInvalidSetting = errors.New("scanner: invalid scanner setting")

// SettingError says which field of which scanner setting is wrong, so an API
// can answer with the offending parameter.
type SettingError struct {
	// ID is the setting's scanner id ("" when the id itself is missing).
	ID string
	// Field is the spec name of the field ("mode", "blocking", ...).
	Field string
	// Reason explains what is wrong, quoting the value but never user text.
	Reason string
}

func (e *SettingError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("scanner setting: %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("scanner setting %q: %s: %s", e.ID, e.Field, e.Reason)
}

// Unwrap lets callers test for ErrInvalidSetting.
func (e *SettingError) Unwrap() error { return ErrInvalidSetting }

// FailMode says what happens to a text when a scanner fails (error, panic,
// budget overrun). The zero value is FailClosed: an unscreened text is not
// forwarded unless the operator chose so.
type FailMode uint8

// Fail modes: how a scanner that errs or runs out of time decides.
const (
	// FailClosed blocks the text with the scanner's flag message.
	FailClosed FailMode = iota
	// FailOpen forwards the text and records the error.
	FailOpen
)

// String returns the spec word, "closed" or "open".
func (f FailMode) String() string {
	if f == FailOpen {
		return "open"
	}
	return "closed"
}

// ParseFailMode reads the spec word; "" is FailClosed.
func ParseFailMode(s string) (FailMode, error) {
	switch s {
	case "", "closed":
		return FailClosed, nil
	case "open":
		return FailOpen, nil
	}
	return FailClosed, fmt.Errorf("fail mode %q: want \"open\" or \"closed\"", s)
}

// Setting is how one scanner of a pipeline behaves. Package policy decides
// which settings an endpoint runs and writes them in the API's all-strings
// form; the engine never parses a string on the screening path.
type Setting struct {
	// ID is the scanner instance id; unique within a pipeline.
	ID string
	// Version of the scanner (part of the verdict cache key).
	Version string
	// Enabled false keeps the scanner configured but not run; it is
	// recorded as Skipped.
	Enabled bool
	// Mode says what a detection does: block, modify or flag.
	Mode Mode
	// Blocking true runs the scanner before forwarding. False runs it after
	// the response, off the latency path, so it can only flag.
	Blocking bool
	// Force true means narrower config layers may not override this setting.
	Force bool
	// FlagMessage is what the end user sees when this scanner blocks.
	FlagMessage string
	// FailMode decides a text this scanner failed on; default FailClosed.
	FailMode FailMode
	// Timeout is the scanner's time budget per screening; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Directions the scanner screens; nil means Input only.
	Directions []Direction
}

// Validate checks the setting on its own. A non-blocking scanner runs after
// the response has gone out, so it can only flag: any other mode would
// promise a block or a redaction that cannot happen, so it is rejected
// rather than silently coerced.
func (st Setting) Validate() error {
	if st.ID == "" {
		return &SettingError{Field: "id", Reason: "required"}
	}
	switch st.Mode {
	case ModeBlock, ModeModify, ModeFlag:
	default:
		return &SettingError{ID: st.ID, Field: "mode", Reason: fmt.Sprintf("%q: want \"block\", \"modify\" or \"flag\"", st.Mode)}
	}
	if !st.Blocking && st.Mode != ModeFlag {
		return &SettingError{ID: st.ID, Field: "blocking", Reason: fmt.Sprintf("\"false\" runs the scanner after the response, so it can only flag, but mode is %q", st.Mode)}
	}
	if st.FailMode != FailClosed && st.FailMode != FailOpen {
		return &SettingError{ID: st.ID, Field: "failMode", Reason: fmt.Sprintf("unknown fail mode %d", st.FailMode)}
	}
	if st.Timeout < 0 {
		return &SettingError{ID: st.ID, Field: "timeout", Reason: "negative"}
	}
	if st.Directions != nil && len(st.Directions) == 0 {
		return &SettingError{ID: st.ID, Field: "directions", Reason: "empty: a scanner must screen at least one direction"}
	}
	for i, d := range st.Directions {
		if d != Input && d != Output {
			return &SettingError{ID: st.ID, Field: "directions", Reason: fmt.Sprintf("%q: want \"input\" or \"output\"", d)}
		}
		if slices.Contains(st.Directions[:i], d) {
			return &SettingError{ID: st.ID, Field: "directions", Reason: fmt.Sprintf("%q listed twice", d)}
		}
	}
	return nil
}

// clone copies st so that no Directions backing array is shared between a
// pipeline and its caller.
func (st Setting) clone() Setting {
	st.Directions = slices.Clone(st.Directions)
	return st
}
