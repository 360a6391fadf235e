// composecheck loads a compose file with the Compose specification's own
// loader (compose-go, what `docker compose` uses) and prints the resolved
// project as JSON, or the loader's error and exit 1.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: composecheck <compose.yml> [env file]")
		os.Exit(2)
	}
	file := os.Args[1]
	options := []cli.ProjectOptionsFn{
		cli.WithWorkingDirectory(filepath.Dir(file)),
		cli.WithOsEnv,
	}
	if len(os.Args) > 2 {
		options = append(options, cli.WithEnvFiles(os.Args[2]), cli.WithDotEnv)
	}
	projectOptions, err := cli.NewProjectOptions([]string{file}, options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	project, err := cli.ProjectFromOptions(context.Background(), projectOptions)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(project); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
