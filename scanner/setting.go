package scanner

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeout is a scanner's time budget per screening when its Setting
// names none. In-process detectors take microseconds; the budget exists for
// the ones that call out (classifiers, moderation APIs).
const DefaultTimeout = 100 * time.Millisecond

// Errors of the setting layer. Validation errors are *SettingError values
// that wrap ErrInvalidSetting.
var (
	// ErrInvalidSetting is wrapped by every *SettingError.
	ErrInvalidSetting = errors.New("scanner: invalid scanner setting")
	// ErrUnknownPackage is returned when a package reference names no
	// known package.
	ErrUnknownPackage = errors.New("scanner: unknown package")
)

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

// Setting is the engine's typed view of one ScannerSetting. The API form,
// SettingStrings, is all strings as the spec says; the engine never parses a
// string on the screening path.
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

// SettingStrings is the API form of a ScannerSetting: every field a string,
// "" meaning "not set". FailMode, Timeout and Directions are Promptwall
// extensions to the spec's seven fields, omitted when they hold the default.
type SettingStrings struct {
	ID          string `json:"id"`
	Version     string `json:"version"`
	Enabled     string `json:"enabled"`
	Mode        string `json:"mode"`
	Blocking    string `json:"blocking"`
	Force       string `json:"force"`
	FlagMessage string `json:"flagMessage"`
	// FailMode is "closed" (default) or "open".
	FailMode string `json:"failMode,omitempty"`
	// Timeout is the budget in decimal milliseconds, as template.timeout.
	Timeout string `json:"timeout,omitempty"`
	// Directions is a comma-separated list of "input" and "output";
	// default "input".
	Directions string `json:"directions,omitempty"`
}

// SettingFromStrings converts and validates the API form. Defaults:
// enabled "true", blocking "true", force "false", failMode "closed",
// timeout DefaultTimeout, directions "input". id and mode are required:
// guessing what a detector should do with a detection is not the engine's
// call.
func SettingFromStrings(s SettingStrings) (Setting, error) {
	if s.ID == "" {
		return Setting{}, &SettingError{Field: "id", Reason: "required"}
	}
	if s.Mode == "" {
		return Setting{}, &SettingError{ID: s.ID, Field: "mode", Reason: "required"}
	}
	out := Setting{ID: s.ID, Version: s.Version, Enabled: true, Blocking: true}
	if err := out.apply(s); err != nil {
		return Setting{}, err
	}
	return out, out.Validate()
}

// apply overwrites the fields of st that s sets (non-empty), leaving the
// others alone. ID and Version are the caller's business.
func (st *Setting) apply(s SettingStrings) error {
	var err error
	if s.Enabled != "" {
		if st.Enabled, err = parseBool(s.Enabled); err != nil {
			return &SettingError{ID: st.ID, Field: "enabled", Reason: err.Error()}
		}
	}
	if s.Mode != "" {
		st.Mode = Mode(s.Mode)
	}
	if s.Blocking != "" {
		if st.Blocking, err = parseBool(s.Blocking); err != nil {
			return &SettingError{ID: st.ID, Field: "blocking", Reason: err.Error()}
		}
	}
	if s.Force != "" {
		if st.Force, err = parseBool(s.Force); err != nil {
			return &SettingError{ID: st.ID, Field: "force", Reason: err.Error()}
		}
	}
	if s.FlagMessage != "" {
		st.FlagMessage = s.FlagMessage
	}
	if s.FailMode != "" {
		if st.FailMode, err = ParseFailMode(s.FailMode); err != nil {
			return &SettingError{ID: st.ID, Field: "failMode", Reason: err.Error()}
		}
	}
	if s.Timeout != "" {
		ms, perr := strconv.ParseInt(s.Timeout, 10, 64)
		if perr != nil || ms <= 0 || ms > int64(time.Hour/time.Millisecond) {
			return &SettingError{ID: st.ID, Field: "timeout", Reason: fmt.Sprintf("%q: want milliseconds in 1..3600000", s.Timeout)}
		}
		st.Timeout = time.Duration(ms) * time.Millisecond
	}
	if s.Directions != "" {
		st.Directions = st.Directions[:0:0]
		for d := range strings.SplitSeq(s.Directions, ",") {
			d = strings.TrimSpace(d)
			if d != string(Input) && d != string(Output) {
				return &SettingError{ID: st.ID, Field: "directions", Reason: fmt.Sprintf("%q: want \"input\" and/or \"output\"", d)}
			}
			if !slices.Contains(st.Directions, Direction(d)) {
				st.Directions = append(st.Directions, Direction(d))
			}
		}
	}
	return nil
}

// parseBool accepts exactly the spec's "true" and "false"; "1" or "TRUE"
// would round-trip differently and hide typos.
func parseBool(s string) (bool, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%q: want \"true\" or \"false\"", s)
}

// Strings returns the API form. Extension fields holding their default are
// left empty so a default setting reads exactly as the spec's seven fields;
// SettingFromStrings(s.Strings()) gives s back.
func (st Setting) Strings() SettingStrings {
	out := SettingStrings{
		ID:          st.ID,
		Version:     st.Version,
		Enabled:     strconv.FormatBool(st.Enabled),
		Mode:        string(st.Mode),
		Blocking:    strconv.FormatBool(st.Blocking),
		Force:       strconv.FormatBool(st.Force),
		FlagMessage: st.FlagMessage,
	}
	if st.FailMode != FailClosed {
		out.FailMode = st.FailMode.String()
	}
	if st.Timeout != 0 {
		out.Timeout = strconv.FormatInt(st.Timeout.Milliseconds(), 10)
	}
	if st.Directions != nil {
		parts := make([]string, len(st.Directions))
		for i, d := range st.Directions {
			parts[i] = string(d)
		}
		out.Directions = strings.Join(parts, ",")
	}
	return out
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

// clone copies st so that no Directions backing array is shared between
// config layers.
func (st Setting) clone() Setting {
	st.Directions = slices.Clone(st.Directions)
	return st
}

// Resolve merges config layers ordered broadest first (global, project,
// chatbot): a setting in a later layer replaces the
// one with the same ID from earlier layers, unless an earlier layer forced
// it, in which case the forced setting stays, still forced. Settings only in
// a narrower layer are added. Within one layer the last setting of an ID
// wins, so a layer may be written as append(expandedPackages, scanners...)
// to let a named scanner refine its package. The result keeps the order in
// which IDs first appear, because pipeline order is operator-chosen (cheap
// scanners first).
func Resolve(layers ...[]Setting) []Setting {
	var out []Setting
	index := make(map[string]int)
	for _, layer := range layers {
		// forcedBefore is frozen per layer: a Force set inside this layer
		// binds the narrower layers, not this layer's own later entries.
		forcedBefore := make(map[string]bool, len(out))
		for _, s := range out {
			if s.Force {
				forcedBefore[s.ID] = true
			}
		}
		for _, s := range layer {
			i, ok := index[s.ID]
			switch {
			case !ok:
				index[s.ID] = len(out)
				out = append(out, s.clone())
			case forcedBefore[s.ID]:
				// A broader layer forced this ID: keep it.
			default:
				out[i] = s.clone()
			}
		}
	}
	return out
}

// Package is a named bundle of scanner settings ("pii", "secrets",
// "injection").
type Package struct {
	Name string
	// Version of the bundle; a reference naming another version is an error.
	Version  string
	Settings []Setting
}

// ExpandPackages replaces each package reference by the settings of the
// package it names. A reference is a ScannerSetting of the endpoint's
// packages array: its ID names the package, its Version (optional) must
// match the package's, and every other field it sets (non-empty) overrides
// that field in every member, so {"id":"pii","mode":"flag"} turns the whole
// bundle into flagging. Members of later references replace earlier ones of
// the same ID. Unknown packages are an error wrapping ErrUnknownPackage.
func ExpandPackages(refs []SettingStrings, catalog []Package) ([]Setting, error) {
	var out []Setting
	index := make(map[string]int)
	for _, ref := range refs {
		i := slices.IndexFunc(catalog, func(p Package) bool { return p.Name == ref.ID })
		if i < 0 {
			return nil, fmt.Errorf("%w: %q", ErrUnknownPackage, ref.ID)
		}
		pkg := catalog[i]
		if ref.Version != "" && ref.Version != pkg.Version {
			return nil, fmt.Errorf("%w: %q version %q (have %q)", ErrUnknownPackage, ref.ID, ref.Version, pkg.Version)
		}
		for _, m := range pkg.Settings {
			m = m.clone()
			if err := m.apply(ref); err != nil {
				return nil, fmt.Errorf("package %q: %w", pkg.Name, err)
			}
			if err := m.Validate(); err != nil {
				return nil, fmt.Errorf("package %q: %w", pkg.Name, err)
			}
			if j, ok := index[m.ID]; ok {
				out[j] = m
				continue
			}
			index[m.ID] = len(out)
			out = append(out, m)
		}
	}
	return out, nil
}
