// Command listgen is make generate's first step: it writes into
// openapi.yaml and template.yaml the lists and values the code declares
// (shared/local/listgen says which and how).
//
//	go run ./cmd/listgen    # from the repository's root
package main

import (
	"fmt"
	"os"

	"contentapi/shared/local/listgen"
)

func main() {
	if err := listgen.Run("."); err != nil {
		fmt.Fprintln(os.Stderr, "listgen:", err)
		os.Exit(1)
	}
}
