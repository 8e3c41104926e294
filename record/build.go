package record

import (
	"errors"

	"github.com/promptwall/promptwall/internal/utf8text"
	"github.com/promptwall/promptwall/limits"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

// ProviderResultLimit bounds the raw provider answer kept in a record.
const ProviderResultLimit = 64 << 10

// Exchange is what a front end saw of one exchange: the request and its
// screening, the answer and its screening, and how it failed, if it did.
type Exchange struct {
	// Conv is the request's conversation; Input its screening.
	Conv  *scanner.Conversation
	Input *scanner.Result
	// OutConv holds the answer's screened messages (nil when none were);
	// Output their screening.
	OutConv *scanner.Conversation
	Output  *scanner.Result
	// Raw is the provider's answer as received (or as much of it as the
	// front end kept).
	Raw string
	// Failure is why the exchange did not complete: the provider's error,
	// an answer that could not be screened, or the provider's limits. A
	// failure of an exchange whose input was blocked is not recorded: the
	// block is the outcome.
	Failure error
}

// Build fills p's input, scanner results, outcome, analysis, response and
// provider result from x. The raw answer and a failure's text are masked
// like the texts themselves, since either may echo what the scanners found
// on either side. It returns the index of the message shown as input, for
// scanner results appended later (deferred scanners).
func Build(p *store.Prompt, x Exchange) (shown int) {
	shown = NewestUserMessage(x.Conv)
	p.Input = Text(x.Conv, shown, x.Input)
	results := make([]store.ScannerResult, 0, scannerCount(x.Input)+scannerCount(x.Output))
	p.Result.ScannerResults = AppendScannerResults(AppendScannerResults(results, x.Input, shown), x.Output, 0)
	outcome := Worst(x.Input, x.Output)
	p.Result.Outcome = string(outcome)
	sensitive := append(SensitiveValues(x.Conv, x.Input), SensitiveValues(x.OutConv, x.Output)...)
	raw := MaskValues(utf8text.Truncate(x.Raw, ProviderResultLimit), sensitive)
	switch {
	case x.Failure != nil && outcome != scanner.Blocked:
		p.Result.Outcome = string(scanner.Error)
		p.Result.ProviderResult = MaskValues(utf8text.Truncate(failureLabel(x.Failure)+x.Failure.Error(), ProviderResultLimit), sensitive)
		if raw != "" {
			p.Result.ProviderResult += "\n" + raw
		}
	case outcome == scanner.Blocked:
		// The user read the flag message, not the answer.
		if x.Input != nil {
			p.Result.Analysis = x.Input.FlagMessage
		}
		if x.Output != nil && x.Output.Outcome == scanner.Blocked {
			p.Result.Analysis = x.Output.FlagMessage
		}
		p.Result.ProviderResult = raw
	default:
		p.Result.ProviderResult = raw
		// A model may echo what the input's scanners found.
		p.Result.Response = MaskValues(Response(x.OutConv, x.Output), sensitive)
	}
	return shown
}

// failureLabel says whether the request reached the provider.
func failureLabel(err error) string {
	if _, limited := errors.AsType[*limits.LimitError](err); limited {
		return "not forwarded: "
	}
	return "provider error: "
}

// Worst is the most severe outcome of the results (passed for none).
func Worst(results ...*scanner.Result) scanner.Outcome {
	out := scanner.Passed
	for _, r := range results {
		if r != nil && r.Outcome.Severity() > out.Severity() {
			out = r.Outcome
		}
	}
	return out
}

func scannerCount(res *scanner.Result) int {
	if res == nil {
		return 0
	}
	return len(res.Scanners)
}
