package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/evaluate"
)

func evalCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "eval [--config <file>] [--endpoint <name>] [--json] [file.jsonl]",
		Short: "Measure an endpoint's scanners on labelled JSON Lines texts",
		Long: `
Reads labelled JSON Lines from the file (or standard input when none or "-"):
  {"text": "...", "label": 0|1, "category": "family/sub"}
  {"text": "...", "spans": [{"start": 0, "end": 5, "kind": "EMAIL_ADDRESS"}]}
screens every text with each scanner of the named endpoint, each judged on
its own verdict whatever the others decide, and prints per scanner and per
category: texts caught, missed, false positives, precision, recall, false
positive rate and mean time per text; for span rows, exact-span precision
and recall per entity kind for the pii scanner. Span offsets are UTF-8
bytes ("type" is accepted for "kind"). Nothing is stored or sent.
Use it to measure a policy on your own data before switching it to block.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			var a evalArgs
			a.configFile, _ = f.GetString("config")
			a.adapter, _ = f.GetString("adapter")
			a.endpoint, _ = f.GetString("endpoint")
			dir, _ := f.GetString("direction")
			a.opts.Direction = scanner.Direction(dir)
			a.opts.CategoryDepth, _ = f.GetInt("category-depth")
			a.json, _ = f.GetBool("json")
			in := cmd.InOrStdin()
			if len(args) == 1 && args[0] != "-" {
				file, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer file.Close()
				in = file
			}
			return runEval(a, in, cmd.OutOrStdout())
		},
	}
	c.Flags().StringP("config", "c", "", "Configuration file (Caddyfile or JSON); empty uses the built-in default endpoint")
	c.Flags().StringP("adapter", "a", "", "Name of config adapter to apply")
	c.Flags().String("endpoint", DefaultEndpointName, "Endpoint configuration whose scanners to measure")
	c.Flags().String("direction", string(scanner.Input), "Screen as input (prompts) or output (answers)")
	c.Flags().Int("category-depth", 2, "Group categories by their first N slash-separated segments; 0 keeps whole categories")
	c.Flags().Bool("json", false, "Print the report as JSON instead of a table")
	return c
}

type evalArgs struct {
	configFile, adapter, endpoint string
	opts                          evaluate.Options
	json                          bool
}

func runEval(a evalArgs, in io.Reader, out io.Writer) error {
	if d := a.opts.Direction; d != scanner.Input && d != scanner.Output {
		return fmt.Errorf("--direction must be input or output, not %q", d)
	}
	// Rows first: a bad line should fail before the endpoint's models load.
	rows, err := evaluate.ReadRows(in)
	if err != nil {
		return err
	}
	app, err := loadScreeningApp(a.configFile, a.adapter)
	if err != nil {
		return err
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := app.provisionScreening(ctx); err != nil {
		return err
	}
	defer app.shared.closeCaches()
	ep, err := app.endpoint(a.endpoint)
	if err != nil {
		return err
	}
	rep, err := evaluate.Run(context.Background(), ep.pipeline.Stages(), rows, a.opts)
	if err != nil {
		return err
	}
	if a.json {
		return rep.WriteJSON(out)
	}
	return rep.WriteTable(out)
}

// loadScreeningApp reads the promptwall app of a config file without
// provisioning it, as runScan does; an empty file name is the built-in
// defaults.
func loadScreeningApp(configFile, adapter string) (*App, error) {
	app := new(App)
	if configFile == "" {
		return app, nil
	}
	cfgJSON, _, _, err := caddycmd.LoadConfig(configFile, adapter)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		Apps map[string]json.RawMessage `json:"apps"`
	}
	if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	if raw, ok := cfg.Apps["promptwall"]; ok {
		if err := json.Unmarshal(raw, app); err != nil {
			return nil, fmt.Errorf("reading promptwall app config: %w", err)
		}
	}
	return app, nil
}
