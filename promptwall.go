// Package promptwall registers every Promptwall Caddy module and the
// `caddy promptwall` commands. Build Caddy with it:
// `xcaddy build --with github.com/promptwall/promptwall=./`.
package promptwall

import (
	_ "github.com/promptwall/promptwall/caddymodule"
	_ "github.com/promptwall/promptwall/cli"
)
