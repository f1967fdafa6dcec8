package main

import (
	"cmp"
	"fmt"
	"net"
	"os"
	"strconv"

	"contentapi/shared/app"
	"contentapi/shared/local/stack"
)

// genConfig is where the local stack's generation parts listen, and which
// Bedrock it calls.
type genConfig struct {
	// S3Port serves the pictures (their URLs open in a browser); 0: any
	// free port. BedrockPort serves the stand-in; 0: any free port.
	S3Port, BedrockPort int
	// RealBedrock (BEDROCK=aws) calls Amazon Bedrock in BedrockRegion with
	// the credentials in the environment, instead of the stand-in.
	RealBedrock   bool
	BedrockRegion string
}

// genConfigFromEnv reads S3_PORT (default 8001), BEDROCK_PORT (8002),
// BEDROCK (standin, the default, or aws) and BEDROCK_REGION (us-west-2,
// the template's default, where both default models run).
func genConfigFromEnv() (genConfig, error) {
	var c genConfig
	var err error
	if c.S3Port, err = portFromEnv("S3_PORT", defaultS3Port); err != nil {
		return c, err
	}
	if c.BedrockPort, err = portFromEnv("BEDROCK_PORT", defaultBedrockPort); err != nil {
		return c, err
	}
	switch v := os.Getenv("BEDROCK"); v {
	case "", "standin":
	case "aws":
		c.RealBedrock = true
	default:
		return c, fmt.Errorf("BEDROCK=%q: want standin (the default) or aws", v)
	}
	c.BedrockRegion = cmp.Or(os.Getenv(app.EnvBedrockRegion), "us-west-2")
	return c, nil
}

// startGeneration starts the S3 server and the Bedrock stand-in (or, with
// BEDROCK=aws, nothing for Bedrock) and returns them with the functions'
// environment for them.
func startGeneration(c genConfig) (*stack.Generation, map[string]string, error) {
	parts, err := stack.StartGeneration(stack.GenerationOptions{
		S3Addr:      addr(c.S3Port),
		BedrockAddr: addr(c.BedrockPort),
		RealBedrock: c.RealBedrock,
		Region:      c.BedrockRegion,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%w (set S3_PORT or BEDROCK_PORT to use other ports)", err)
	}
	return parts, parts.Env(), nil
}

func addr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// withGeneration is the functions' environment with generation's wiring.
// With the real Bedrock, the developer's AWS credentials stay: DynamoDB
// Local and the local S3 accept any signature, Bedrock only a real one.
func withGeneration(vars, gen map[string]string, realBedrock bool) map[string]string {
	out := make(map[string]string, len(vars)+len(gen))
	for k, v := range vars {
		out[k] = v
	}
	for k, v := range gen {
		out[k] = v
	}
	if realBedrock {
		for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
			delete(out, k)
		}
	}
	return out
}
