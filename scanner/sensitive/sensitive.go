// Package sensitive is the sensitive_output scanner: secrets and personal
// data in a model's answer. It reuses the secrets and pii detectors, so an
// answer is judged by exactly the rules prompts are, and reports both under
// one result whose matches are masked in storage and redacted in modify mode.
package sensitive

import (
	"context"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/pii"
	"github.com/promptwall/promptwall/scanner/secrets"
)

// Type is the detector family reported in data.type.
const Type = "sensitive_output"

// Config configures the sensitive_output scanner.
type Config struct {
	// Secrets configures the secret rules. Default: every rule group.
	Secrets secrets.Config `json:"secrets,omitempty"`
	// PII configures the personal data types. Default: pii.DefaultEntities.
	PII pii.Config `json:"pii,omitempty"`
	// SkipPII turns personal-data detection off. Default: false.
	SkipPII bool `json:"skip_pii,omitempty"`
}

// Scanner finds secrets and personal data in answers.
type Scanner struct {
	secrets *secrets.Scanner
	pii     *pii.Scanner
}

// New builds the scanner.
func New(cfg Config) (*Scanner, error) {
	sec, err := secrets.New(cfg.Secrets)
	if err != nil {
		return nil, err
	}
	s := &Scanner{secrets: sec}
	if !cfg.SkipPII {
		if s.pii, err = pii.New(cfg.PII); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Type names the detector family.
func (s *Scanner) Type() string { return Type }

// Scan reports the secrets and personal data of one text.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	f, err := s.secrets.Scan(ctx, t)
	if err != nil || s.pii == nil {
		return f, err
	}
	p, err := s.pii.Scan(ctx, t)
	if err != nil {
		return f, err
	}
	if !p.Detected {
		return f, nil
	}
	if !f.Detected {
		return p, nil
	}
	f.Matches = append(f.Matches, p.Matches...)
	f.Score = max(f.Score, p.Score)
	f.Reason = f.Reason + "; " + p.Reason
	return f, nil
}
