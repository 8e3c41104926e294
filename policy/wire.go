package policy

import (
	"strconv"
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// SettingStrings is the API's wire form of a scanner setting (the spec's
// ScannerSetting): every field a string, so Enabled, Blocking and Force are
// "true" or "false". FailMode, Timeout and Directions are Promptwall
// extensions to the spec's seven fields, omitted when empty. The field
// order is that of the records already stored, which keep this JSON.
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
	// Timeout is the budget in decimal milliseconds.
	Timeout string `json:"timeout,omitempty"`
	// Directions is a comma-separated list of "input" and "output".
	Directions string `json:"directions,omitempty"`
}

// Strings returns the wire form of a setting. Extension fields holding
// their default (fail closed, no timeout of its own, no directions of its
// own) are left empty, so a default setting reads exactly as the spec's
// seven fields.
func Strings(st scanner.Setting) SettingStrings {
	out := SettingStrings{
		ID:          st.ID,
		Version:     st.Version,
		Enabled:     strconv.FormatBool(st.Enabled),
		Mode:        string(st.Mode),
		Blocking:    strconv.FormatBool(st.Blocking),
		Force:       strconv.FormatBool(st.Force),
		FlagMessage: st.FlagMessage,
	}
	if st.FailMode != scanner.FailClosed {
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

// Spec returns s with only the spec's seven fields, the form of
// GET /backend/v1/endpoint.
func (s SettingStrings) Spec() SettingStrings {
	s.FailMode, s.Timeout, s.Directions = "", "", ""
	return s
}
