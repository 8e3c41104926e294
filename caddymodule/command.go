package caddymodule

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/record"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "promptwall",
		Usage: "<command> [flags]",
		Short: "Promptwall operator commands",
		Long: `
Operator commands of the Promptwall LLM security gateway.

  scan     screen texts (JSON Lines on stdin) with an endpoint's scanners`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.AddCommand(scanCommand())
		},
	})
}

// maxScanLine bounds one JSON Lines input record.
const maxScanLine = 16 << 20

func scanCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "scan --config <file> [--adapter <name>] [--endpoint <name>] [--direction input|output]",
		Short: "Screen JSON Lines texts from stdin with an endpoint's scanners",
		Long: `
Reads JSON Lines {"text": "..."} from standard input (optionally "system": a
system prompt for the output direction's context) and writes one JSON Lines
verdict {"outcome", "scannerResults"} per input, in the same order, with the
scanners of the named endpoint of the config. Nothing is stored or sent.
Use it to try a policy on your own data before deploying it.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			configFile, _ := f.GetString("config")
			adapter, _ := f.GetString("adapter")
			endpoint, _ := f.GetString("endpoint")
			direction, _ := f.GetString("direction")
			return runScan(configFile, adapter, endpoint, scanner.Direction(direction), cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	c.Flags().StringP("config", "c", "", "Configuration file (Caddyfile or JSON); empty uses the built-in default endpoint")
	c.Flags().StringP("adapter", "a", "", "Name of config adapter to apply")
	c.Flags().String("endpoint", DefaultEndpointName, "Endpoint configuration whose scanners to run")
	c.Flags().String("direction", string(scanner.Input), "Screen as input (prompts) or output (answers)")
	return c
}

type scanLine struct {
	Text   *string `json:"text"`
	System string  `json:"system"`
}

type scanVerdict struct {
	Outcome        string                `json:"outcome"`
	ScannerResults []store.ScannerResult `json:"scannerResults"`
	Error          string                `json:"error,omitempty"`
}

func runScan(configFile, adapter, endpoint string, dir scanner.Direction, in io.Reader, out io.Writer) error {
	if dir != scanner.Input && dir != scanner.Output {
		return fmt.Errorf("--direction must be input or output, not %q", dir)
	}
	app := new(App)
	if configFile != "" {
		cfgJSON, _, _, err := caddycmd.LoadConfig(configFile, adapter)
		if err != nil {
			return err
		}
		var cfg struct {
			Apps map[string]json.RawMessage `json:"apps"`
		}
		if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
			return fmt.Errorf("reading config: %w", err)
		}
		if raw, ok := cfg.Apps["promptwall"]; ok {
			if err := json.Unmarshal(raw, app); err != nil {
				return fmt.Errorf("reading promptwall app config: %w", err)
			}
		}
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := app.provisionScreening(ctx); err != nil {
		return err
	}
	defer app.shared.closeCaches()
	ep, err := app.endpoint(endpoint)
	if err != nil {
		return err
	}

	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), maxScanLine)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for line := 1; sc.Scan(); line++ {
		var v scanVerdict
		var l scanLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Text == nil {
			// One bad line must not shift the verdicts of the next ones:
			// it gets an error verdict in its place.
			v = scanVerdict{Outcome: string(scanner.Error), ScannerResults: []store.ScannerResult{},
				Error: fmt.Sprintf("line %d: want a JSON object with a \"text\" string", line)}
		} else {
			conv := &scanner.Conversation{}
			if l.System != "" {
				conv.Messages = append(conv.Messages, scanner.Message{Role: scanner.RoleSystem, Text: l.System})
			}
			role := scanner.RoleUser
			if dir == scanner.Output {
				role = scanner.RoleAssistant
			}
			conv.Messages = append(conv.Messages, scanner.Message{Role: role, Text: *l.Text})
			res := ep.pipeline.Screen(context.Background(), conv, dir)
			if deferred := ep.pipeline.ScreenDeferred(context.Background(), conv, dir); len(deferred.Scanners) > 0 {
				res.Scanners = append(res.Scanners, deferred.Scanners...)
				if deferred.Outcome.Severity() > res.Outcome.Severity() {
					res.Outcome = deferred.Outcome
				}
			}
			v = scanVerdict{Outcome: string(res.Outcome), ScannerResults: record.ScannerResults(res, len(conv.Messages)-1)}
		}
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("an input line exceeds %d bytes", maxScanLine)
		}
		return err
	}
	return nil
}

// provisionScreening compiles the endpoints without opening the store, so
// the scan command works next to a running gateway that holds the database.
func (a *App) provisionScreening(ctx caddy.Context) error {
	a.logger = zap.NewNop()
	a.metrics = getMetrics()
	shared, err := newCaches(64 << 20)
	if err != nil {
		return err
	}
	a.shared = shared
	return a.compileEndpoints(ctx)
}
