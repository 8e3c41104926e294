package cli

// The commands adapt real configs such as Caddyfile.example, which route
// with reverse_proxy: the tests link the standard modules like the caddy
// binary does.
import _ "github.com/caddyserver/caddy/v2/modules/standard"
