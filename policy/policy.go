// Package policy compiles the scanner policy of an endpoint: the settings an
// operator declares for every endpoint, for a project and for a chatbot, the
// named packages they include, and which declaration wins when two name the
// same scanner (the narrower one, unless a broader one is forced). It imports
// no Caddy: the gateway decodes its config into a Config, and the API serves
// the result in its wire form (SettingStrings).
package policy

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/promptwall/promptwall/scanner"
)

// ErrUnknownPackage is returned when an endpoint includes a package the
// config does not declare.
var ErrUnknownPackage = errors.New("policy: unknown package")

// DefaultFlagMessage is what the end user reads when a scanner that names no
// message blocks: a generic refusal naming no detail of the detection.
const DefaultFlagMessage = "This request was blocked by the organization's AI security policy."

// Scanner is one declared scanner: its setting and the detector that does
// the work. The compiler never looks into Detector; it travels with its
// setting so that a scanner a broader layer forced keeps its own detector
// too, and a narrower layer cannot swap it by reusing the id.
type Scanner[D any] struct {
	Setting  scanner.Setting
	Detector D
}

// Endpoint is one endpoint's own declarations.
type Endpoint[D any] struct {
	// Name identifies the endpoint in errors.
	Name string
	// ProjectID and ChatbotID place the endpoint: an endpoint with both
	// inherits from the project's default endpoint (same project, no
	// chatbot).
	ProjectID, ChatbotID string
	// Packages names the packages included before Scanners.
	Packages []string
	Scanners []Scanner[D]
}

// Config is a whole scanner policy: the scanners every endpoint runs, the
// named packages, and the endpoints.
type Config[D any] struct {
	Global    []Scanner[D]
	Packages  map[string][]Scanner[D]
	Endpoints []Endpoint[D]
}

// Complete applies the defaults of a declared setting and validates it.
// Unset fields take: version "1", mode block, DefaultFlagMessage, and
// directions output for a detector that only makes sense on answers
// (outputOnly), input otherwise. Enabled, Blocking, FailMode and Timeout
// are the caller's to decode, since "unset" reads differently in each config
// syntax.
func Complete(s scanner.Setting, outputOnly bool) (scanner.Setting, error) {
	if s.Version == "" {
		s.Version = "1"
	}
	if s.Mode == "" {
		s.Mode = scanner.ModeBlock
	}
	if s.FlagMessage == "" {
		s.FlagMessage = DefaultFlagMessage
	}
	if len(s.Directions) == 0 {
		s.Directions = []scanner.Direction{scanner.Input}
		if outputOnly {
			s.Directions = []scanner.Direction{scanner.Output}
		}
	}
	return s, s.Validate()
}

// Resolve returns the scanners endpoint i runs, in order: the global
// scanners, then (for a chatbot endpoint) its project's default endpoint's
// packages and scanners, then its own packages and scanners, merged by
// Merge.
func (c *Config[D]) Resolve(i int) ([]Scanner[D], error) {
	ep := &c.Endpoints[i]
	layers := [][]Scanner[D]{c.Global}
	if ep.ChatbotID != "" && ep.ProjectID != "" {
		if parent := c.projectDefault(ep.ProjectID, ep.Name); parent != nil {
			layer, err := c.expand(parent)
			if err != nil {
				return nil, err
			}
			layers = append(layers, layer)
		}
	}
	own, err := c.expand(ep)
	if err != nil {
		return nil, err
	}
	return Merge(append(layers, own)...), nil
}

// projectDefault finds the project's default endpoint (the one with the
// project id and no chatbot), other than the endpoint named self.
func (c *Config[D]) projectDefault(projectID, self string) *Endpoint[D] {
	for i := range c.Endpoints {
		ep := &c.Endpoints[i]
		if ep.Name != self && ep.ProjectID == projectID && ep.ChatbotID == "" {
			return ep
		}
	}
	return nil
}

// expand lists an endpoint's package scanners followed by its own, so a
// scanner the endpoint names refines the package member of the same id.
func (c *Config[D]) expand(ep *Endpoint[D]) ([]Scanner[D], error) {
	var out []Scanner[D]
	for _, name := range ep.Packages {
		p, ok := c.Packages[name]
		if !ok {
			return nil, fmt.Errorf("endpoint %q: %w %q", ep.Name, ErrUnknownPackage, name)
		}
		out = append(out, p...)
	}
	return append(out, ep.Scanners...), nil
}

// Merge merges config layers ordered broadest first (global, project,
// chatbot): a scanner in a later layer replaces the one with the same id
// from earlier layers, unless an earlier layer forced it, in which case the
// forced scanner stays, still forced. Scanners only in a narrower layer are
// added. Within one layer the last scanner of an id wins, so a layer may be
// written as append(packageMembers, scanners...) to let a named scanner
// refine its package. The result keeps the order in which ids first appear,
// because pipeline order is operator-chosen (cheap scanners first).
func Merge[D any](layers ...[]Scanner[D]) []Scanner[D] {
	var out []Scanner[D]
	index := make(map[string]int)
	for _, layer := range layers {
		// forcedBefore is frozen per layer: a Force set inside this layer
		// binds the narrower layers, not this layer's own later entries.
		forcedBefore := make(map[string]bool, len(out))
		for _, s := range out {
			if s.Setting.Force {
				forcedBefore[s.Setting.ID] = true
			}
		}
		for _, s := range layer {
			// No Directions backing array is shared between layers.
			s.Setting.Directions = slices.Clone(s.Setting.Directions)
			i, ok := index[s.Setting.ID]
			switch {
			case !ok:
				index[s.Setting.ID] = len(out)
				out = append(out, s)
			case forcedBefore[s.Setting.ID]:
				// A broader layer forced this id: keep it.
			default:
				out[i] = s
			}
		}
	}
	return out
}

// Sides is what a resolved policy asks of the gateway.
type Sides struct {
	// Input is true when an enabled scanner screens requests.
	Input bool
	// Output is true when an enabled scanner screens answers, so answers
	// must be held or screened as they stream.
	Output bool
	// Deferred is true when an enabled scanner runs after the answer, off
	// the latency path.
	Deferred bool
}

// SidesOf reports which sides the enabled scanners of a resolved policy
// screen; disabled scanners ask nothing.
func SidesOf[D any](resolved []Scanner[D]) Sides {
	var out Sides
	for _, s := range resolved {
		if !s.Setting.Enabled {
			continue
		}
		if !s.Setting.Blocking {
			out.Deferred = true
		}
		for _, d := range s.Setting.Directions {
			if d == scanner.Input {
				out.Input = true
			} else {
				out.Output = true
			}
		}
	}
	return out
}

// Version identifies a resolved policy: its settings and each detector's own
// configuration (detectorConfig returns it as bytes), so a changed setting
// or a changed regex gives a new version, and cached verdicts of the old
// one are not reused.
func Version[D any](resolved []Scanner[D], detectorConfig func(D) []byte) string {
	h := sha256.New()
	for _, s := range resolved {
		fmt.Fprintf(h, "%s\x00%s\x00", s.Setting.ID, s.Setting.Version)
		b, _ := json.Marshal(s.Setting)
		h.Write(b)
		h.Write(detectorConfig(s.Detector))
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:12])
}

// Settings returns the settings of resolved scanners, in order.
func Settings[D any](resolved []Scanner[D]) []scanner.Setting {
	out := make([]scanner.Setting, len(resolved))
	for i, s := range resolved {
		out[i] = s.Setting
	}
	return out
}
