package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/promptwall/promptwall/caddymodule"
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

  scan     screen texts (JSON Lines on stdin) with an endpoint's scanners
  eval     measure an endpoint's scanners on labelled texts (JSON Lines)
  user     add, list, block or unblock users
  token    create or revoke API tokens
  campaign run a red-team campaign in the running gateway

The user and token commands open the database directly: stop the gateway
first, or use the /backend/v1 API while it runs.`,
		CobraFunc: func(cmd *cobra.Command) {
			cmd.AddCommand(scanCommand(), evalCommand(), userCommand(), tokenCommand(), campaignCommand())
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
			return runScan(configFile, adapter, endpoint, scannerDirection(direction), cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	c.Flags().StringP("config", "c", "", "Configuration file (Caddyfile or JSON); empty uses the built-in default endpoint")
	c.Flags().StringP("adapter", "a", "", "Name of config adapter to apply")
	c.Flags().String("endpoint", caddymodule.DefaultEndpointName, "Endpoint configuration whose scanners to run")
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
	var appJSON json.RawMessage
	if configFile != "" {
		var err error
		if appJSON, err = appConfig(configFile, adapter); err != nil {
			return err
		}
	}
	screener, err := caddymodule.NewOfflineScreener(appJSON)
	if err != nil {
		return err
	}
	defer screener.Close()
	pipeline, err := screener.Pipeline(endpoint)
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
			res := pipeline.Screen(context.Background(), conv, dir)
			if deferred := pipeline.ScreenDeferred(context.Background(), conv, dir); len(deferred.Scanners) > 0 {
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

// dbFlags adds the flags that locate the database.
func dbFlags(c *cobra.Command) {
	c.PersistentFlags().String("db", "", "Path of the Promptwall database (default: from --config, else Caddy's data directory)")
	c.PersistentFlags().StringP("config", "c", "", "Configuration file whose promptwall storage to use")
	c.PersistentFlags().StringP("adapter", "a", "", "Name of config adapter to apply")
}

// errNoDatabase is returned when neither a flag nor the config locates the
// database.
var errNoDatabase = errors.New("no database path: give --db, or --config naming a config with promptwall storage")

// database resolves the database: --db, else the storage of --config,
// else the app's default path.
func database(c *cobra.Command) (Database, error) {
	if p, _ := c.Flags().GetString("db"); p != "" {
		return Database{Path: p}, nil
	}
	var appJSON json.RawMessage
	if configFile, _ := c.Flags().GetString("config"); configFile != "" {
		adapter, _ := c.Flags().GetString("adapter")
		var err error
		if appJSON, err = appConfig(configFile, adapter); err != nil {
			return Database{}, err
		}
	}
	engine, err := caddymodule.StorageEngineName(appJSON)
	if err != nil {
		return Database{}, err
	}
	if engine != "bolt" {
		return Database{Open: func() (store.Backend, error) { return caddymodule.OpenStorage(appJSON) }}, nil
	}
	p, err := caddymodule.StoragePath(appJSON)
	if err != nil {
		return Database{}, err
	}
	if p == "" {
		return Database{}, errNoDatabase
	}
	return Database{Path: p}, nil
}

// appConfig loads a config file through its adapter and returns its
// promptwall app, or nil when the config has none.
func appConfig(configFile, adapter string) (json.RawMessage, error) {
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
	return cfg.Apps["promptwall"], nil
}

func userCommand() *cobra.Command {
	c := &cobra.Command{Use: "user", Short: "Manage users: add, list, block, unblock"}
	dbFlags(c)
	add := &cobra.Command{
		Use:   "add --email <e-mail> [--name <name>] [--role owner|admin|member] [--org <org>]",
		Short: "Add a user to an organization",
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := database(cmd)
			if err != nil {
				return err
			}
			f := cmd.Flags()
			var a UserAddArgs
			a.Org, _ = f.GetString("org")
			a.Email, _ = f.GetString("email")
			a.Name, _ = f.GetString("name")
			a.Role, _ = f.GetString("role")
			a.Projects, _ = f.GetStringSlice("project")
			return UserAdd(cmd.OutOrStdout(), db, a)
		},
	}
	add.Flags().String("org", caddymodule.DefaultOrgName, "Organization id or name")
	add.Flags().String("email", "", "E-mail address (required, unique in the organization)")
	add.Flags().String("name", "", "Display name")
	add.Flags().String("role", store.RoleMember, "Role: owner, admin or member")
	add.Flags().StringSlice("project", nil, "Projects the user belongs to")
	list := &cobra.Command{
		Use:   "list [--org <org>]",
		Short: "List an organization's users",
		RunE: func(cmd *cobra.Command, _ []string) error {
			db, err := database(cmd)
			if err != nil {
				return err
			}
			org, _ := cmd.Flags().GetString("org")
			return UserList(cmd.OutOrStdout(), db, org)
		},
	}
	list.Flags().String("org", caddymodule.DefaultOrgName, "Organization id or name")
	block := func(use string, blocked bool) *cobra.Command {
		b := &cobra.Command{
			Use:   use + " <user id or e-mail> [--org <org>]",
			Short: strings.ToUpper(use[:1]) + use[1:] + " a user (blocked users get 401 on every call)",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				db, err := database(cmd)
				if err != nil {
					return err
				}
				org, _ := cmd.Flags().GetString("org")
				return UserBlock(cmd.OutOrStdout(), db, org, args[0], blocked)
			},
		}
		b.Flags().String("org", caddymodule.DefaultOrgName, "Organization id or name")
		return b
	}
	c.AddCommand(add, list, block("block", true), block("unblock", false))
	return c
}

func tokenCommand() *cobra.Command {
	c := &cobra.Command{Use: "token", Short: "Manage API tokens: create, revoke"}
	dbFlags(c)
	create := &cobra.Command{
		Use:   "create <user id or e-mail> [--name <label>] [--org <org>]",
		Short: "Create an API token for a user; it is printed once, only its SHA-256 is stored",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := database(cmd)
			if err != nil {
				return err
			}
			org, _ := cmd.Flags().GetString("org")
			name, _ := cmd.Flags().GetString("name")
			return TokenCreate(cmd.OutOrStdout(), db, org, args[0], name)
		},
	}
	create.Flags().String("org", caddymodule.DefaultOrgName, "Organization id or name")
	create.Flags().String("name", "", "A label for the token")
	revoke := &cobra.Command{
		Use:   "revoke <token id or the token itself>",
		Short: "Revoke an API token",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := database(cmd)
			if err != nil {
				return err
			}
			return TokenRevoke(cmd.OutOrStdout(), db, args[0])
		},
	}
	c.AddCommand(create, revoke)
	return c
}

func scannerDirection(s string) scanner.Direction { return scanner.Direction(s) }
