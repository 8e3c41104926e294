package caddymodule

import (
	"encoding/json"

	"github.com/caddyserver/caddy/v2"

	"github.com/promptwall/promptwall/scanner/defaults"
)

// defaultEndpoint is the endpoint used when the operator declares none named
// "default": the scanner set of package defaults, with each detector's
// default configuration.
func defaultEndpoint() Endpoint {
	ep := Endpoint{Name: DefaultEndpointName}
	for _, e := range defaults.Entries() {
		s := e.Setting
		enabled, blocking := s.Enabled, s.Blocking
		dirs := make([]string, len(s.Directions))
		for i, d := range s.Directions {
			dirs[i] = string(d)
		}
		raw := detectorJSON(e.Module, e.Config)
		ep.Scanners = append(ep.Scanners, ScannerConfig{
			ID:          s.ID,
			Version:     s.Version,
			Enabled:     &enabled,
			Mode:        string(s.Mode),
			Blocking:    &blocking,
			FlagMessage: s.FlagMessage,
			FailMode:    s.FailMode.String(),
			Timeout:     caddy.Duration(s.Timeout),
			Directions:  dirs,
			DetectorRaw: raw,
		})
	}
	return ep
}

// detectorJSON is a detector module's JSON: its configuration plus the
// inline "scanner" key naming the module.
func detectorJSON(module string, cfg any) json.RawMessage {
	fields := map[string]any{}
	b, _ := json.Marshal(cfg)
	_ = json.Unmarshal(b, &fields)
	fields["scanner"] = module
	raw, _ := json.Marshal(fields)
	return raw
}
