package caddymodule

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"
)

func init() {
	httpcaddyfile.RegisterGlobalOption("promptwall", parseGlobalOption)
	httpcaddyfile.RegisterHandlerDirective("promptwall", parseHandlerDirective)
	httpcaddyfile.RegisterDirectiveOrder("promptwall", httpcaddyfile.Before, "reverse_proxy")
	httpcaddyfile.RegisterHandlerDirective("promptwall_api", parseAPIDirective)
	httpcaddyfile.RegisterDirectiveOrder("promptwall_api", httpcaddyfile.Before, "reverse_proxy")
}

func parseGlobalOption(d *caddyfile.Dispenser, _ any) (any, error) {
	app := new(App)
	if err := app.UnmarshalCaddyfile(d); err != nil {
		return nil, err
	}
	return httpcaddyfile.App{Name: "promptwall", Value: caddyconfig.JSON(app, nil)}, nil
}

// UnmarshalCaddyfile sets up the app from the `promptwall` global option:
//
//	promptwall {
//	    storage             <path>          # a bbolt file, or:
//	    storage <engine> { ... }            # bolt { path <file> }, postgres { dsn ... } (see PostgresStorage)
//	    open_timeout        <duration>
//	    retention           <duration>
//	    queue_size          <records>
//	    enqueue_wait        <duration>
//	    durability          sync|batched
//	    max_size            <size>
//	    bootstrap_token     <token>
//	    verdict_cache_size  <size>
//	    limits redis { ... }                # limits shared by instances (see RedisLimits)
//	    scanner <module> [<id>] { ... }     # global settings every endpoint inherits
//	    package <name> {
//	        scanner <module> [<id>] { ... }
//	    }
//	    org <name> { ... }                  # declared organization and users (see parseOrgBlock)
//	    provider <name> { ... }             # upstream model API, limits, keys (see parseProviderBlock)
//	    campaign <name> { ... }             # red-team campaign (see parseCampaignBlock)
//	    pack_file <path...>                 # operator attack packs (JSON Lines or YAML)
//	    endpoint <name> {
//	        project      <project id>
//	        chatbot      <chatbot id>
//	        id           <uuid>
//	        packages     <name...>
//	        providers    <provider name...>
//	        on_block     error|completion
//	        block_status <code>
//	        restore_placeholders
//	        scanner <module> [<id>] {
//	            mode         block|modify|flag
//	            blocking     true|false
//	            enabled      true|false
//	            force
//	            flag_message <text>
//	            fail_mode    open|closed
//	            timeout      <duration>
//	            direction    input|output ...
//	            version      <version>
//	            <detector option> <values...>
//	        }
//	    }
//	}
func (a *App) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the option name
	if d.NextArg() {
		return d.ArgErr()
	}
	// The options of one value, each given once.
	scalars := map[string]any{
		"bootstrap_token": &a.BootstrapToken, "open_timeout": &a.OpenTimeout, "retention": &a.Retention,
		"enqueue_wait": &a.EnqueueWait, "queue_size": &a.QueueSize, "max_size": &a.MaxSize,
		"verdict_cache_size": &a.VerdictCacheBytes,
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		key := d.Val()
		if key != "scanner" && key != "package" && key != "endpoint" && key != "org" && key != "provider" && key != "campaign" && key != "pack_file" {
			if seen[key] {
				return d.Errf("duplicate sub-directive %q", key)
			}
			seen[key] = true
		}
		if target, ok := scalars[key]; ok {
			if err := parseArgInto(d, target); err != nil {
				return err
			}
			continue
		}
		switch key {
		case "storage":
			raw, err := parseStorage(d)
			if err != nil {
				return err
			}
			a.StorageRaw = raw
		case "durability":
			if !d.AllArgs(&a.Durability) {
				return d.ArgErr()
			}
			if a.Durability != "sync" && a.Durability != "batched" {
				return d.Errf("durability %q: must be sync or batched", a.Durability)
			}
		case "scanner":
			sc, err := parseScannerBlock(d)
			if err != nil {
				return err
			}
			a.Scanners = append(a.Scanners, sc)
		case "package":
			var p Package
			if !d.AllArgs(&p.Name) {
				return d.ArgErr()
			}
			for nesting := d.Nesting(); d.NextBlock(nesting); {
				if d.Val() != "scanner" {
					return d.Errf("unknown package sub-directive %q (only scanner)", d.Val())
				}
				sc, err := parseScannerBlock(d)
				if err != nil {
					return err
				}
				p.Scanners = append(p.Scanners, sc)
			}
			a.Packages = append(a.Packages, p)
		case "endpoint":
			ep, err := parseEndpointBlock(d)
			if err != nil {
				return err
			}
			a.Endpoints = append(a.Endpoints, ep)
		case "provider":
			p, err := parseProviderBlock(d)
			if err != nil {
				return err
			}
			a.Providers = append(a.Providers, p)
		case "campaign":
			c, err := parseCampaignBlock(d)
			if err != nil {
				return err
			}
			a.Campaigns = append(a.Campaigns, c)
		case "pack_file":
			files := d.RemainingArgs()
			if len(files) == 0 {
				return d.ArgErr()
			}
			a.PackFiles = append(a.PackFiles, files...)
		case "limits":
			raw, err := parseLimitsEngine(d)
			if err != nil {
				return err
			}
			a.LimitsRaw = raw
		case "org":
			org, err := parseOrgBlock(d)
			if err != nil {
				return err
			}
			a.Orgs = append(a.Orgs, org)
		default:
			return d.Errf("unknown promptwall sub-directive %q", key)
		}
	}
	return nil
}

func parseEndpointBlock(d *caddyfile.Dispenser) (Endpoint, error) {
	var ep Endpoint
	if !d.AllArgs(&ep.Name) {
		return ep, d.ArgErr()
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		if key != "scanner" {
			if seen[key] {
				return ep, d.Errf("duplicate endpoint sub-directive %q", key)
			}
			seen[key] = true
		}
		switch key {
		case "project":
			if !d.AllArgs(&ep.ProjectID) {
				return ep, d.ArgErr()
			}
		case "chatbot":
			if !d.AllArgs(&ep.ChatbotID) {
				return ep, d.ArgErr()
			}
		case "id":
			if !d.AllArgs(&ep.ID) {
				return ep, d.ArgErr()
			}
		case "packages":
			ep.Packages = d.RemainingArgs()
			if len(ep.Packages) == 0 {
				return ep, d.ArgErr()
			}
		case "providers":
			ep.Providers = d.RemainingArgs()
			if len(ep.Providers) == 0 {
				return ep, d.ArgErr()
			}
		case "on_block":
			if !d.AllArgs(&ep.OnBlock) {
				return ep, d.ArgErr()
			}
		case "block_status":
			n, err := parseIntArg(d)
			if err != nil {
				return ep, err
			}
			ep.BlockStatus = n
		case "restore_placeholders":
			if d.NextArg() {
				return ep, d.ArgErr()
			}
			ep.RestorePlaceholders = true
		case "scanner":
			sc, err := parseScannerBlock(d)
			if err != nil {
				return ep, err
			}
			ep.Scanners = append(ep.Scanners, sc)
		default:
			return ep, d.Errf("unknown endpoint sub-directive %q", key)
		}
	}
	return ep, nil
}

// parseScannerBlock parses `scanner <module> [<id>] { ... }`. The common
// ScannerSetting options are handled here; every other line configures the
// detector module, through its own caddyfile.Unmarshaler when it has one,
// else by matching the option name to the module's JSON field.
func parseScannerBlock(d *caddyfile.Dispenser) (ScannerConfig, error) {
	var sc ScannerConfig
	var modName string
	if !d.NextArg() {
		return sc, d.ArgErr()
	}
	modName = d.Val()
	if d.NextArg() {
		sc.ID = d.Val()
	}
	if d.NextArg() {
		return sc, d.ArgErr()
	}
	modID := "promptwall.scanners." + modName
	mod, err := caddy.GetModule(modID)
	if err != nil {
		return sc, d.Errf("unknown scanner module %q: %v", modName, err)
	}
	line := d.Line()
	var detectorTokens []caddyfile.Token
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		handled, err := parseSettingOption(d, &sc)
		if err != nil {
			return sc, err
		}
		if !handled {
			detectorTokens = append(detectorTokens, d.NextSegment()...)
			continue
		}
		if seen[key] {
			return sc, d.Errf("duplicate scanner option %q", key)
		}
		seen[key] = true
	}

	det := mod.New()
	if err := unmarshalDetector(det, modName, line, detectorTokens); err != nil {
		return sc, err
	}
	sc.DetectorRaw = caddyconfig.JSONModuleObject(det, "scanner", modName, nil)
	return sc, nil
}

func parseSettingOption(d *caddyfile.Dispenser, sc *ScannerConfig) (bool, error) {
	switch d.Val() {
	case "id":
		if !d.AllArgs(&sc.ID) {
			return true, d.ArgErr()
		}
	case "version":
		if !d.AllArgs(&sc.Version) {
			return true, d.ArgErr()
		}
	case "mode":
		if !d.AllArgs(&sc.Mode) {
			return true, d.ArgErr()
		}
	case "flag_message":
		if !d.AllArgs(&sc.FlagMessage) {
			return true, d.ArgErr()
		}
	case "fail_mode":
		if !d.AllArgs(&sc.FailMode) {
			return true, d.ArgErr()
		}
	case "enabled", "blocking":
		b, err := parseBoolArg(d)
		if err != nil {
			return true, err
		}
		if d.Val() == "enabled" {
			sc.Enabled = &b
		} else {
			sc.Blocking = &b
		}
	case "force":
		if d.NextArg() {
			b, err := strconv.ParseBool(d.Val())
			if err != nil || d.NextArg() {
				return true, d.Errf("force takes no argument or true/false")
			}
			sc.Force = b
		} else {
			sc.Force = true
		}
	case "timeout":
		dur, err := parseDurationArg(d)
		if err != nil {
			return true, err
		}
		sc.Timeout = dur
	case "direction", "directions":
		sc.Directions = d.RemainingArgs()
		if len(sc.Directions) == 0 {
			return true, d.ArgErr()
		}
	default:
		return false, nil
	}
	return true, nil
}

// unmarshalDetector configures a detector module from its option lines.
func unmarshalDetector(det caddy.Module, name string, line int, tokens []caddyfile.Token) error {
	if u, ok := det.(caddyfile.Unmarshaler); ok {
		// Present the options as the module's own block, as if written
		// `<name> { ... }`, the form Caddy modules expect.
		all := make([]caddyfile.Token, 0, len(tokens)+3)
		all = append(all, caddyfile.Token{Text: name, Line: line}, caddyfile.Token{Text: "{", Line: line})
		all = append(all, tokens...)
		all = append(all, caddyfile.Token{Text: "}", Line: line})
		return u.UnmarshalCaddyfile(caddyfile.NewDispenser(all))
	}
	d := caddyfile.NewDispenser(tokens)
	seen := map[string]bool{}
	for d.Next() {
		if err := setOption(d, det, seen); err != nil {
			return err
		}
	}
	return nil
}

// setOption assigns one option line `key values...` to the JSON field of
// that name: strings, numbers, booleans, durations, lists (values append
// across lines) and string maps (`key name value`). A single-valued option
// given twice is an error.
func setOption(d *caddyfile.Dispenser, target any, seen map[string]bool) error {
	key := d.Val()
	args := d.RemainingArgs()
	field, ok := fieldByJSONName(reflect.ValueOf(target).Elem(), key)
	if !ok {
		// A list field also answers to its singular: `pattern ...` lines
		// add to "patterns".
		if field, ok = fieldByJSONName(reflect.ValueOf(target).Elem(), key+"s"); !ok || (field.Kind() != reflect.Slice && field.Kind() != reflect.Map) {
			return d.Errf("unknown option %q", key)
		}
	}
	if k := field.Kind(); k != reflect.Slice && k != reflect.Map {
		if seen[key] {
			return d.Errf("duplicate scanner option %q", key)
		}
		seen[key] = true
	}
	if field.Kind() == reflect.Pointer {
		// Optional scalars (*bool, *int) distinguish "not set" from zero.
		elem := reflect.New(field.Type().Elem())
		if err := setValue(d, key, elem.Elem(), args); err != nil {
			return err
		}
		field.Set(elem)
		return nil
	}
	return setValue(d, key, field, args)
}

// setValue assigns args to one field by its kind.
func setValue(d *caddyfile.Dispenser, key string, field reflect.Value, args []string) error {
	if u, ok := field.Addr().Interface().(json.Unmarshaler); ok {
		if len(args) != 1 {
			return d.ArgErr()
		}
		b, _ := json.Marshal(args[0])
		if err := u.UnmarshalJSON(b); err != nil {
			return d.Errf("%s: %v", key, err)
		}
		return nil
	}
	switch field.Kind() {
	case reflect.String:
		if len(args) != 1 {
			return d.ArgErr()
		}
		field.SetString(args[0])
	case reflect.Bool:
		switch len(args) {
		case 0:
			field.SetBool(true)
		case 1:
			b, err := strconv.ParseBool(args[0])
			if err != nil {
				return d.Errf("%s: want true or false, got %q", key, args[0])
			}
			field.SetBool(b)
		default:
			return d.ArgErr()
		}
	case reflect.Int, reflect.Int32, reflect.Int64:
		if len(args) != 1 {
			return d.ArgErr()
		}
		if field.Type() == reflect.TypeFor[caddy.Duration]() {
			dur, err := caddy.ParseDuration(args[0])
			if err != nil {
				return d.Errf("%s: %v", key, err)
			}
			field.SetInt(int64(dur))
			return nil
		}
		n, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil {
			return d.Errf("%s: want an integer, got %q", key, args[0])
		}
		field.SetInt(n)
	case reflect.Float32, reflect.Float64:
		if len(args) != 1 {
			return d.ArgErr()
		}
		f, err := strconv.ParseFloat(args[0], 64)
		if err != nil {
			return d.Errf("%s: want a number, got %q", key, args[0])
		}
		field.SetFloat(f)
	case reflect.Slice:
		if elem := field.Type().Elem(); elem.Kind() == reflect.Struct {
			item, err := positionalStruct(elem, args)
			if err != nil {
				return d.Errf("%s: %v", key, err)
			}
			field.Set(reflect.Append(field, item))
			return nil
		}
		if field.Type().Elem().Kind() != reflect.String {
			return d.Errf("option %q takes structured values: configure this scanner in JSON", key)
		}
		if len(args) == 0 {
			return d.ArgErr()
		}
		for _, a := range args {
			field.Set(reflect.Append(field, reflect.ValueOf(a)))
		}
	case reflect.Map:
		if field.Type().Key().Kind() != reflect.String || field.Type().Elem().Kind() != reflect.String {
			return d.Errf("option %q takes structured values: configure this scanner in JSON", key)
		}
		if len(args) != 2 {
			return d.Errf("%s takes a name and a value", key)
		}
		if field.IsNil() {
			field.Set(reflect.MakeMap(field.Type()))
		}
		field.SetMapIndex(reflect.ValueOf(args[0]), reflect.ValueOf(args[1]))
	default:
		return d.Errf("option %q cannot be set from the Caddyfile: configure this scanner in JSON", key)
	}
	return nil
}

// positionalStruct fills a struct's string fields, in declaration order,
// from an option's arguments: `pattern <name> <regex> [<kind>]`.
func positionalStruct(t reflect.Type, args []string) (reflect.Value, error) {
	v := reflect.New(t).Elem()
	var names []string
	n := 0
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.String {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, "<"+name+">")
		if n < len(args) {
			v.Field(i).SetString(args[n])
			n++
		}
	}
	if len(args) == 0 || len(args) > len(names) {
		return v, fmt.Errorf("want arguments %s", strings.Join(names, " "))
	}
	return v, nil
}

// fieldByJSONName finds the field serialised under name, looking into
// embedded structs the way encoding/json flattens them.
func fieldByJSONName(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		tagName, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && tagName == "" && f.Type.Kind() == reflect.Struct {
			if fv, ok := fieldByJSONName(v.Field(i), name); ok {
				return fv, true
			}
			continue
		}
		if tagName == "-" {
			continue
		}
		if tagName == name || (tagName == "" && strings.EqualFold(f.Name, name)) {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

func parseHandlerDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Handler)
	if err := m.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return m, nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens:
//
//	promptwall [<endpoint>] {
//	    endpoint          <name>
//	    format            <name>
//	    max_body_size     <size>
//	    max_response_size <size>
//	    provider          <name>
//	    project           <id>
//	    authenticate
//	    max_queue_wait    <duration>
//	    stream_hold_back  <bytes>
//	    body_read_timeout <duration>
//	    pass_through      upgrade|multipart|unknown_format ...
//	}
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return parseDirective(d, "endpoint", &h.Endpoint, func(key string) error {
		var err error
		switch key {
		case "format":
			err = parseStringArg(d, &h.Format)
		case "max_body_size":
			h.MaxBodySize, err = parseSizeArg(d)
		case "max_response_size":
			h.MaxResponseSize, err = parseSizeArg(d)
		case "provider":
			err = parseStringArg(d, &h.Provider)
		case "project":
			err = parseStringArg(d, &h.ProjectID)
		case "pass_through":
			h.PassThrough = d.RemainingArgs()
			if len(h.PassThrough) == 0 {
				return d.ArgErr()
			}
			for _, k := range h.PassThrough {
				if k != passUpgrade && k != passMultipart && k != passUnknownFormat {
					return d.Errf("pass_through: unknown kind %q (upgrade, multipart, unknown_format)", k)
				}
			}
		case "authenticate":
			if d.NextArg() {
				return d.ArgErr()
			}
			h.Authenticate = true
		case "max_queue_wait":
			h.MaxQueueWait, err = parseDurationArg(d)
		case "body_read_timeout":
			h.BodyReadTimeout, err = parseDurationArg(d)
		case "stream_hold_back":
			h.StreamHoldBack, err = parseIntArg(d)
		default:
			return d.Errf("unknown promptwall sub-directive %q", key)
		}
		return err
	})
}

// parseDirective reads a handler directive, `<directive> [<arg>] { ... }`:
// the optional argument sets *arg, which the block may also set with the
// sub-directive argKey but not both; every other sub-directive goes to sub,
// which rejects the ones it does not know. A sub-directive given twice is an
// error, since the second would silently replace the first.
func parseDirective(d *caddyfile.Dispenser, argKey string, arg *string, sub func(key string) error) error {
	d.Next() // the directive name
	if d.NextArg() {
		*arg = d.Val()
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		key := d.Val()
		if seen[key] {
			return d.Errf("duplicate sub-directive %q", key)
		}
		seen[key] = true
		if key != argKey {
			if err := sub(key); err != nil {
				return err
			}
			continue
		}
		if *arg != "" {
			return d.Errf("%s given twice (as argument and sub-directive)", key)
		}
		if err := parseStringArg(d, arg); err != nil {
			return err
		}
	}
	return nil
}

// parseStringArg reads the one argument of a sub-directive into dst.
func parseStringArg(d *caddyfile.Dispenser, dst *string) error {
	if !d.AllArgs(dst) {
		return d.ArgErr()
	}
	return nil
}

func parseAPIDirective(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(APIHandler)
	if err := m.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	return m, nil
}

// parseEngineBlock reads the block of a storage or limits engine,
// `<engine> { <option> <value> ... }`: no argument after the engine's
// name, each option at most once, its value parsed by the type of its
// target in opts (see parseArgInto). name is the block in errors
// ("storage postgres").
func parseEngineBlock(d *caddyfile.Dispenser, name string, opts map[string]any) error {
	d.Next() // the engine name
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		target, ok := opts[key]
		if !ok {
			return d.Errf("unknown %s sub-directive %q", name, key)
		}
		if seen[key] {
			return d.Errf("duplicate %s sub-directive %q", name, key)
		}
		seen[key] = true
		if err := parseArgInto(d, target); err != nil {
			return err
		}
	}
	return nil
}

// parseArgInto sets target from the line's one argument, by its type:
// *string as is, *int an integer, *caddy.Duration a duration, *int64 a
// size ("64MiB").
func parseArgInto(d *caddyfile.Dispenser, target any) error {
	var err error
	switch t := target.(type) {
	case *string:
		if !d.AllArgs(t) {
			return d.ArgErr()
		}
	case *int:
		*t, err = parseIntArg(d)
	case *caddy.Duration:
		*t, err = parseDurationArg(d)
	case *int64:
		*t, err = parseSizeArg(d)
	default:
		panic(fmt.Sprintf("parseArgInto: no parser for %T", target))
	}
	return err
}

func parseIntArg(d *caddyfile.Dispenser) (int, error) {
	var s string
	if !d.AllArgs(&s) {
		return 0, d.ArgErr()
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, d.Errf("%s: want an integer, got %q", d.Val(), s)
	}
	return n, nil
}

func parseBoolArg(d *caddyfile.Dispenser) (bool, error) {
	var s string
	if !d.AllArgs(&s) {
		return false, d.ArgErr()
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, d.Errf("want true or false, got %q", s)
	}
	return b, nil
}

func parseDurationArg(d *caddyfile.Dispenser) (caddy.Duration, error) {
	var s string
	if !d.AllArgs(&s) {
		return 0, d.ArgErr()
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil {
		return 0, d.Errf("bad duration %q: %v", s, err)
	}
	return caddy.Duration(dur), nil
}

func parseSizeArg(d *caddyfile.Dispenser) (int64, error) {
	var s string
	if !d.AllArgs(&s) {
		return 0, d.ArgErr()
	}
	n, err := humanize.ParseBytes(s)
	if err != nil {
		return 0, d.Errf("bad size %q: %v", s, err)
	}
	if n > 1<<40 {
		return 0, d.Errf("size %q is too large", s)
	}
	return int64(n), nil
}

// Interface guards
var (
	_ caddyfile.Unmarshaler = (*App)(nil)
	_ caddyfile.Unmarshaler = (*Handler)(nil)
)
