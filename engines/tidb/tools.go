//go:build tools

// Package tools names the programs this module builds.
package tools

import _ "github.com/pingcap/tidb/cmd/tidb-server"
