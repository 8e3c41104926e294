// Package pii is the "pii" scanner: it finds personal data (e-mail addresses,
// phone numbers, payment cards, IBANs, US social security numbers, IP
// addresses, and, heuristically, names, places, street addresses and dates)
// in a single pass over the canonical text.
//
// Structured identifiers are validated the way their issuers define them
// (Luhn, ISO 13616 mod-97, SSA area/group/serial rules, libphonenumber
// metadata, net/netip), so a well-formed but invalid value is not reported.
// Names, places and addresses come from a compact embedded gazetteer plus
// capitalisation and context cues; they are a fast approximation of NER, not
// a substitute for it, and are scored lower.
//
// Kinds use Presidio's entity names so findings line up with tools that
// already speak them.
package pii

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// Entity kinds reported in scanner.Match.Kind (Presidio's names).
const (
	KindEmail         = "EMAIL_ADDRESS"
	KindPhone         = "PHONE_NUMBER"
	KindCreditCard    = "CREDIT_CARD"
	KindIBAN          = "IBAN_CODE"
	KindSSN           = "US_SSN"
	KindIP            = "IP_ADDRESS"
	KindDriverLicense = "US_DRIVER_LICENSE"
	KindDomain        = "DOMAIN_NAME"
	KindDate          = "DATE_TIME"
	KindZip           = "ZIP_CODE"
	KindAddress       = "STREET_ADDRESS"
	KindPerson        = "PERSON"
	KindLocation      = "GPE"
)

// kind is the internal index of an entity kind; its order is the priority
// used when two detections overlap (lower wins), so validated identifiers
// beat heuristics that happen to cover the same bytes.
type kind uint8

const (
	kEmail kind = iota
	kIBAN
	kCreditCard
	kSSN
	kIP
	kDriverLicense
	kPhone
	kDomain
	kDate
	kAddress
	kZip
	kPerson
	kLocation
	numKinds
)

var kindNames = [numKinds]string{
	kEmail:         KindEmail,
	kIBAN:          KindIBAN,
	kCreditCard:    KindCreditCard,
	kSSN:           KindSSN,
	kIP:            KindIP,
	kDriverLicense: KindDriverLicense,
	kPhone:         KindPhone,
	kDomain:        KindDomain,
	kDate:          KindDate,
	kAddress:       KindAddress,
	kZip:           KindZip,
	kPerson:        KindPerson,
	kLocation:      KindLocation,
}

// kindAliases accepts the other names operators use for the same entity
// (Presidio's LOCATION and GPE are one kind here).
var kindAliases = map[string]kind{
	"LOCATION": kLocation,
	"EMAIL":    kEmail,
	"PHONE":    kPhone,
	"SSN":      kSSN,
	"IBAN":     kIBAN,
	"URL":      kDomain,
}

// Kinds returns the entity kinds the scanner supports, in priority order.
func Kinds() []string { return slices.Clone(kindNames[:]) }

// ErrUnknownEntity is returned (wrapped) by New when Entities or Disabled
// names a kind the scanner does not support.
var ErrUnknownEntity = errors.New("pii: unknown entity kind")

// Config configures the pii scanner. The zero value is usable:
// DefaultEntities, US phone region, no score floor, no allow list.
type Config struct {
	// Entities lists the kinds to report, by Presidio name
	// ("EMAIL_ADDRESS", "PHONE_NUMBER", ...; "LOCATION" is accepted for
	// "GPE"), or "all" for every supported kind (see Kinds). Default:
	// DefaultEntities, the kinds validated by structure.
	Entities []string `json:"entities,omitempty"`

	// Disabled lists kinds removed from Entities, so an operator can turn
	// off a noisy heuristic (say "PERSON") without listing all the others.
	// Default: none.
	Disabled []string `json:"disabled,omitempty"`

	// Region is the ISO 3166-1 alpha-2 region used to read phone numbers
	// written without an international "+CC" prefix. Default: "US".
	Region string `json:"region,omitempty"`

	// PhoneRegions are further regions tried, in order, when a national
	// number is not valid in Region (for example ["GB", "DE"] for a
	// European deployment). Default: none.
	PhoneRegions []string `json:"phone_regions,omitempty"`

	// StrictPhones reports only numbers libphonenumber validates. By
	// default a phone-shaped number (7 to 15 digits in phone grouping) is
	// also reported, at a lower score, when a cue word such as "phone",
	// "call", "mobile" or "fax" is next to it: numbers from regions other
	// than Region are common in prompts. Default: false.
	StrictPhones bool `json:"strict_phones,omitempty"`

	// MinScore drops matches scored below it (0..1). Structured
	// identifiers score 0.9 to 1, context-only phones 0.6, gazetteer
	// names and places 0.4 to 0.7. Default: 0 (report every match).
	MinScore float64 `json:"min_score,omitempty"`

	// AllowList holds values never reported, compared with the matched
	// text case-insensitively (a support address, the company's own
	// switchboard number). Default: none.
	AllowList []string `json:"allow_list,omitempty"`
}

// Scanner is the pii detector. It holds only read-only state after New, so
// one value may be shared by any number of goroutines.
type Scanner struct {
	enabled  [numKinds]bool
	regions  []string
	strict   bool
	minScore float64
	allow    map[string]struct{}
}

// DefaultEntities are the kinds reported when the configuration names none:
// those validated by structure (checksums, number plans, address syntax),
// whose measured precision and recall on the labelled data are >= 0.95.
// Names, places and addresses come from a gazetteer and heuristics with
// about 0.6 precision: flagging "France" in a geography question would drown
// the real findings, so they are opt-in ("all", or by name).
var DefaultEntities = []string{KindEmail, KindPhone, KindCreditCard, KindIBAN, KindSSN, KindIP}

// New validates cfg and builds a Scanner.
func New(cfg Config) (*Scanner, error) {
	s := &Scanner{strict: cfg.StrictPhones, minScore: cfg.MinScore}
	if cfg.MinScore < 0 || cfg.MinScore > 1 {
		return nil, fmt.Errorf("pii: min_score %v outside 0..1", cfg.MinScore)
	}
	entities := cfg.Entities
	if len(entities) == 0 {
		entities = DefaultEntities
	}
	if len(entities) == 1 && strings.EqualFold(entities[0], "all") {
		entities = nil
		for k := range s.enabled {
			s.enabled[k] = true
		}
	}
	for _, name := range entities {
		k, err := lookupKind(name)
		if err != nil {
			return nil, err
		}
		s.enabled[k] = true
	}
	for _, name := range cfg.Disabled {
		k, err := lookupKind(name)
		if err != nil {
			return nil, err
		}
		s.enabled[k] = false
	}
	region := strings.ToUpper(strings.TrimSpace(cfg.Region))
	if region == "" {
		region = "US"
	}
	for _, r := range append([]string{region}, cfg.PhoneRegions...) {
		r = strings.ToUpper(strings.TrimSpace(r))
		if !validRegion(r) {
			return nil, fmt.Errorf("pii: unknown phone region %q", r)
		}
		if !slices.Contains(s.regions, r) {
			s.regions = append(s.regions, r)
		}
	}
	if len(cfg.AllowList) > 0 {
		s.allow = make(map[string]struct{}, len(cfg.AllowList))
		for _, v := range cfg.AllowList {
			s.allow[strings.ToLower(strings.TrimSpace(v))] = struct{}{}
		}
	}
	return s, nil
}

func lookupKind(name string) (kind, error) {
	n := strings.ToUpper(strings.TrimSpace(name))
	for k, kn := range kindNames {
		if kn == n {
			return kind(k), nil
		}
	}
	if k, ok := kindAliases[n]; ok {
		return k, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownEntity, name)
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return "pii" }

// Scan implements scanner.Scanner. It matches on the canonical view (so
// full-width digits and confusable letters do not hide an identifier) and
// reports offsets into the original text.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	if err := ctx.Err(); err != nil {
		return scanner.Finding{}, err
	}
	if t == nil || t.Text == nil {
		return scanner.Finding{}, nil
	}
	v := t.Text.Canonical()
	found := s.find(v.S)
	if len(found) == 0 {
		return scanner.Finding{}, nil
	}
	f := scanner.Finding{Matches: make([]scanner.Match, 0, len(found))}
	var counts [numKinds]int
	for _, m := range found {
		start, end := v.Span(m.start, m.end)
		f.Matches = append(f.Matches, scanner.Match{Start: start, End: end, Kind: kindNames[m.kind], Score: m.score})
		counts[m.kind]++
		f.Score = max(f.Score, m.score)
	}
	f.Detected = true
	f.Reason = reason(counts)
	return f, nil
}

// find returns the accepted detections in s, in view offsets, sorted by
// start and free of overlaps. It allocates only when it finds something.
func (s *Scanner) find(text string) []found {
	p := pass{sc: s, s: text}
	p.run()
	if len(p.out) == 0 {
		return nil
	}
	out := resolve(p.out)
	kept := out[:0]
	for _, m := range out {
		if !s.enabled[m.kind] || m.score < s.minScore {
			continue
		}
		if s.allow != nil {
			if _, ok := s.allow[strings.ToLower(text[m.start:m.end])]; ok {
				continue
			}
		}
		kept = append(kept, m)
	}
	return kept
}

// found is one detection in view offsets.
type found struct {
	start, end int
	kind       kind
	score      float64
}

// resolve sorts detections and removes overlaps: of two overlapping spans
// the higher-priority kind wins, then the longer span, so a validated
// e-mail beats a name guessed from its local part.
func resolve(ms []found) []found {
	slices.SortFunc(ms, func(a, b found) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	out := ms[:0]
	for _, m := range ms {
		if n := len(out); n > 0 && m.start < out[n-1].end {
			last := out[n-1]
			if m.kind < last.kind || (m.kind == last.kind && m.end-m.start > last.end-last.start) {
				out[n-1] = m
				// The winner may now overlap earlier kept spans; drop
				// those it beats.
				for len(out) > 1 && out[len(out)-2].end > out[len(out)-1].start {
					if out[len(out)-2].kind <= out[len(out)-1].kind {
						out = out[:len(out)-1]
						break
					}
					out[len(out)-2] = out[len(out)-1]
					out = out[:len(out)-1]
				}
			}
			continue
		}
		out = append(out, m)
	}
	return out
}

// reason summarises what was found by kind and count; it never quotes the
// text.
func reason(counts [numKinds]int) string {
	var b strings.Builder
	b.WriteString("pii:")
	for k, n := range counts {
		if n == 0 {
			continue
		}
		fmt.Fprintf(&b, " %d %s", n, kindNames[k])
	}
	return b.String()
}

var _ scanner.Scanner = (*Scanner)(nil)
