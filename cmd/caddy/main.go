// Command caddy is Caddy with the standard modules and Promptwall's.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/promptwall/promptwall"
)

func main() {
	caddycmd.Main()
}
