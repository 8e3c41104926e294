// Package defaults is the built-in endpoint configuration: the scanners an
// endpoint runs when the operator declares none. The gateway's default
// endpoint and the detection-quality tests both build from it, so the
// figures we publish are the figures of what users run.
package defaults

import (
	"time"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/injection"
	"github.com/promptwall/promptwall/scanner/invisible"
	"github.com/promptwall/promptwall/scanner/pii"
	"github.com/promptwall/promptwall/scanner/secrets"
)

// Entry is one default scanner: the module that provides it, its setting,
// the detector's configuration and the constructor that applies it.
type Entry struct {
	// Module is the scanner's module name in promptwall.scanners.
	Module  string
	Setting scanner.Setting
	// Config is the detector's configuration (its package's Config), as
	// the Caddy module is configured in JSON.
	Config any
	New    func() (scanner.Scanner, error)
}

const budget = 100 * time.Millisecond

func setting(id string, mode scanner.Mode, message string, dirs ...scanner.Direction) scanner.Setting {
	return scanner.Setting{
		ID: id, Version: "1", Enabled: true, Mode: mode, Blocking: true,
		FlagMessage: message, FailMode: scanner.FailClosed, Timeout: budget, Directions: dirs,
	}
}

// Entries lists the default scanners in the order they run: cheap, decisive
// detectors first so a block short-circuits the rest.
func Entries() []Entry {
	return []Entry{
		{
			Module: "secrets",
			Setting: setting("secrets", scanner.ModeBlock,
				"This request was blocked because it contains a secret such as an API key or password.",
				scanner.Input, scanner.Output),
			Config: secrets.Config{},
			New:    func() (scanner.Scanner, error) { return secrets.New(secrets.Config{}) },
		},
		{
			Module: "invisible_text",
			Setting: setting("invisible_text", scanner.ModeModify,
				"This request was blocked because it contains hidden characters.", scanner.Input),
			Config: invisible.Config{},
			New:    func() (scanner.Scanner, error) { return invisible.New(invisible.Config{}) },
		},
		{
			Module: "prompt_injection",
			// Flag, not block, by default: the model separates attacks from
			// benign documents well (cross-validated recall 0.91, FPR 0.018)
			// but also scores some everyday instructions high ("Translate
			// the following paragraph into French": 9 of 30 hand-written
			// everyday prompts), because the labelled attacks are ordinary
			// instructions planted in documents. Flagged prompts are
			// recorded and metered; operators choose to block.
			Setting: setting("prompt_injection", scanner.ModeFlag,
				"This request was blocked because it looks like a prompt injection or jailbreak attempt.", scanner.Input),
			Config: injection.Config{},
			New:    func() (scanner.Scanner, error) { return injection.New(injection.Config{}) },
		},
		{
			Module: "pii",
			Setting: setting("pii", scanner.ModeFlag,
				"This request was blocked because it contains personal data.", scanner.Input),
			Config: pii.Config{},
			New:    func() (scanner.Scanner, error) { return pii.New(pii.Config{}) },
		},
	}
}

// Stages builds the default scanners.
func Stages() ([]scanner.Stage, error) {
	entries := Entries()
	stages := make([]scanner.Stage, 0, len(entries))
	for _, e := range entries {
		s, err := e.New()
		if err != nil {
			return nil, err
		}
		stages = append(stages, scanner.Stage{Setting: e.Setting, Scanner: s})
	}
	return stages, nil
}

// Pipeline builds the default pipeline.
func Pipeline(opts scanner.Options) (*scanner.Pipeline, error) {
	stages, err := Stages()
	if err != nil {
		return nil, err
	}
	return scanner.NewPipeline(stages, opts)
}
