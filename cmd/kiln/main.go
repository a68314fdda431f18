// Command kiln is kiln's command-line tool.
//
//	kiln info    version, platform, CPU features and kernel variants
//	kiln demo    compile and run a built-in MiniLM-sized encoder
package main

import (
	"fmt"
	"os"
)

var commands = map[string]func(args []string) error{
	"info": runInfo,
	"demo": runDemo,
}

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: kiln info | kiln demo [flags]")
		os.Exit(2)
	}
	if err := commands[os.Args[1]](os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "kiln:", err)
		os.Exit(1)
	}
}
