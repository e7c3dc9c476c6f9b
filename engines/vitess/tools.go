//go:build tools

// Package tools names the programs this module builds.
package tools

import (
	_ "vitess.io/vitess/go/cmd/mysqlctl"
	_ "vitess.io/vitess/go/cmd/vtcombo"
	_ "vitess.io/vitess/go/cmd/vttestserver"
)
