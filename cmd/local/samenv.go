package main

import (
	"encoding/json"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"contentapi/shared/app"
	"contentapi/shared/local/ddblocal"
	"contentapi/shared/local/sam"
	"contentapi/shared/local/stack"
)

// The local stack's default ports; S3_PORT, BEDROCK_PORT and SQS_PORT
// choose others (DynamoDB Local's is ddblocal's).
const (
	defaultS3Port      = 8001
	defaultBedrockPort = 8002
	defaultSQSPort     = 8003
)

// dockerHost is how a function that `sam local` runs in Docker reaches the
// local stack on the host.
const dockerHost = "host.docker.internal"

// envJSONPath is the file `sam local invoke --env-vars` reads.
const envJSONPath = "events/env.json"

// samLocalEnv is events/env.json: for each function, the values `sam local`
// cannot take from the template, for the variables the template declares
// for it (sam local passes no other): the local stack's DynamoDB Local and
// tables, no checksum secret (the template's is an unresolved reference,
// and the demo key in events/ would fail it), the local log level and rate
// limit, the webhooks' local queue and no seal secret (the same unresolved
// reference), and for the functions that generate, the local S3 and Bedrock
// stand-in. make generate writes it (go run ./cmd/local sam-env).
func samLocalEnv(tmpl *sam.Template) map[string]map[string]string {
	local := map[string]string{
		app.EnvEndpoint:    "http://" + net.JoinHostPort(dockerHost, strconv.Itoa(ddblocal.DefaultPort)),
		app.EnvKeyChecksum: "",
		app.EnvLogLevel:    "debug",
		app.EnvRateLimit:   "0",
		app.EnvWebhookSeal: "",
	}
	maps.Copy(local, webhookVars(dockerHost, defaultSQSPort))
	generation := stack.AttachGeneration(net.JoinHostPort(dockerHost, strconv.Itoa(defaultS3Port)),
		net.JoinHostPort(dockerHost, strconv.Itoa(defaultBedrockPort)), false, "").Env()
	generates := []string{app.GeneratorFunction}
	for _, r := range app.Resources {
		generates = append(generates, r.Function())
	}
	tables := localTables(tmpl)
	out := map[string]map[string]string{}
	for _, f := range tmpl.Functions() {
		vars := map[string]string{}
		for name, v := range f.Env() {
			if fn, arg, ok := sam.Intrinsic(v); ok && fn == "Ref" {
				if table, ok := tables[arg.(string)]; ok {
					// Explicit, though sam local would resolve it to the
					// logical ID by itself: the file says what make run
					// creates.
					vars[name] = table
				}
			}
			if value, ok := local[name]; ok {
				vars[name] = value
			}
			if value, ok := generation[name]; ok && slices.Contains(generates, f.LogicalID) {
				vars[name] = value
			}
			// The webhook sender presigns image events' urls: the bucket
			// and its local S3, not the models.
			if value, ok := generation[name]; ok && f.LogicalID == app.SenderFunction && (name == app.EnvPicturesBucket || name == app.EnvS3Endpoint) {
				vars[name] = value
			}
		}
		out[f.LogicalID] = vars
	}
	return out
}

// writeSAMLocalEnv writes events/env.json under root.
func writeSAMLocalEnv(root string, tmpl *sam.Template) error {
	b, err := samLocalEnvJSON(tmpl)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, envJSONPath), b, 0o644)
}

func samLocalEnvJSON(tmpl *sam.Template) ([]byte, error) {
	b, err := json.MarshalIndent(samLocalEnv(tmpl), "", "  ")
	return append(b, '\n'), err
}
