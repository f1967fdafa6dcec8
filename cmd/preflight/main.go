// Command preflight checks a deployed stack's models before real traffic
// reaches it (make preflight). For each model the stack is configured to
// call, it reports, with the operator's AWS credentials:
//
//   - access, granted or denied: a deliberately invalid InvokeModel (a body
//     no model accepts) is refused with AccessDeniedException when the
//     account or the caller may not use the model, and with
//     ValidationException, unbilled, when it may;
//   - the model's lifecycle status from Bedrock's control plane
//     (GetFoundationModel): ACTIVE, or LEGACY on its way to end of life;
//   - the region it is called in.
//
// It exits 0 only when every model is granted and ACTIVE, 1 when one is not
// or a check could not be made, and 2 on a usage error.
//
//	preflight [--stack contentapi] [--region us-east-1]
//	preflight --text-model ID [--text-profile P] --image-model ID [--image-profile P] --bedrock-region R [--endpoint URL]
//
// The first form reads the models and BedrockRegion from the stack's
// parameters (cloudformation:DescribeStacks), in --region (default: the
// AWS profile's). The second names them as the template's parameters do,
// without a stack; --endpoint sends the Bedrock calls to a local stand-in
// instead of AWS.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrock"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"contentapi/shared/awsenv"
)

// Exit statuses.
const (
	exitReady    = 0
	exitNotReady = 1
	exitUsage    = 2
)

// checkTimeout bounds one model's two calls, the SDK's retries included.
const checkTimeout = 30 * time.Second

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command line.
type options struct {
	stack, region string
	explicit      setup
	endpoint      string
}

func parseArgs(args []string) (options, error) {
	var o options
	var text, image model
	fs := flag.NewFlagSet("preflight", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.stack, "stack", "contentapi", "the deployed stack's name")
	fs.StringVar(&o.region, "region", "", "the stack's region (default: the AWS profile's)")
	fs.StringVar(&text.ID, "text-model", "", "the text model, as the TextModel parameter (instead of a stack)")
	fs.StringVar(&text.Profile, "text-profile", "", "its inference profile prefix, as TextModelProfile")
	fs.StringVar(&image.ID, "image-model", "", "the image model, as the ImageModel parameter (instead of a stack)")
	fs.StringVar(&image.Profile, "image-profile", "", "its inference profile prefix, as ImageModelProfile")
	fs.StringVar(&o.explicit.Region, "bedrock-region", "", "the region the models are called in, as BedrockRegion")
	fs.StringVar(&o.endpoint, "endpoint", "", "a local stand-in of Bedrock to call instead of AWS (with the model flags)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("no arguments are taken, got %q", fs.Arg(0))
	}
	if text.ID == "" && image.ID == "" {
		if o.explicit.Region != "" || o.endpoint != "" || text.Profile != "" || image.Profile != "" {
			return o, errors.New("--bedrock-region, --endpoint and the profiles go with --text-model and --image-model")
		}
		return o, nil
	}
	switch {
	case text.ID == "" || image.ID == "":
		return o, errors.New("--text-model and --image-model go together: the stack calls both")
	case o.explicit.Region == "":
		return o, errors.New("--bedrock-region is needed with the model flags")
	case o.region != "":
		return o, errors.New("--region is the stack's; with the model flags, --bedrock-region says where they are called")
	}
	text.Kind, image.Kind = "text", "image"
	o.explicit.Generation, o.explicit.Models = true, []model{text, image}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return exitReady
	}
	if err != nil {
		fmt.Fprintf(stderr, "preflight: %v\n%s", err, usage)
		return exitUsage
	}
	s, c, err := o.connect(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "preflight:", err)
		return exitNotReady
	}
	if !s.Generation {
		fmt.Fprintln(stdout, "Generation is off: the stack calls no model. Ready.")
		return exitReady
	}
	reports := make([]report, len(s.Models))
	for i, m := range s.Models {
		mctx, cancel := context.WithTimeout(ctx, checkTimeout)
		reports[i] = c.check(mctx, m)
		cancel()
	}
	return printReports(stdout, reports)
}

// connect finds what the stack calls and builds the clients that check it:
// the operator's credentials in AWS, placeholders for a stand-in.
func (o options) connect(ctx context.Context) (setup, checker, error) {
	if o.endpoint != "" {
		creds, err := awsenv.Credentials(true)
		if err != nil {
			return setup{}, checker{}, err
		}
		return o.explicit, checker{
			region:  o.explicit.Region,
			runtime: bedrockruntime.New(bedrockruntime.Options{Region: o.explicit.Region, Credentials: creds, BaseEndpoint: aws.String(o.endpoint)}),
			control: bedrock.New(bedrock.Options{Region: o.explicit.Region, Credentials: creds, BaseEndpoint: aws.String(o.endpoint)}),
		}, nil
	}
	var opts []func(*config.LoadOptions) error
	if o.region != "" {
		opts = append(opts, config.WithRegion(o.region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return setup{}, checker{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	s := o.explicit
	if len(s.Models) == 0 {
		if cfg.Region == "" {
			return setup{}, checker{}, errors.New("no AWS region configured: pass --region, or set AWS_REGION or a profile's region")
		}
		out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(o.stack)})
		if err != nil {
			return setup{}, checker{}, fmt.Errorf("reading stack %s in %s: %w", o.stack, cfg.Region, err)
		}
		if len(out.Stacks) != 1 {
			return setup{}, checker{}, fmt.Errorf("stack %s in %s: %d stacks found", o.stack, cfg.Region, len(out.Stacks))
		}
		if s, err = fromParameters(out.Stacks[0].Parameters); err != nil {
			return setup{}, checker{}, fmt.Errorf("stack %s: %w", o.stack, err)
		}
	}
	// The models are called in BedrockRegion, whatever the stack's region.
	return s, checker{
		region:  s.Region,
		runtime: bedrockruntime.NewFromConfig(cfg, func(opt *bedrockruntime.Options) { opt.Region = s.Region }),
		control: bedrock.NewFromConfig(cfg, func(opt *bedrock.Options) { opt.Region = s.Region }),
	}, nil
}

// printReports writes the reports as a table and, under it, what to do
// about each model that is not ready; the exit status says whether all are.
func printReports(w io.Writer, reports []report) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tMODEL\tCALLED AS\tREGION\tACCESS\tLIFECYCLE")
	for _, r := range reports {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Kind, r.ID, r.calledAs(), r.Region, r.Access, r.Lifecycle)
	}
	tw.Flush()
	notReady := 0
	for _, r := range reports {
		if r.ready() {
			continue
		}
		notReady++
		for _, n := range r.Notes {
			fmt.Fprintf(w, "\n%s: %s", r.calledAs(), n)
		}
		fmt.Fprintln(w)
	}
	if notReady > 0 {
		fmt.Fprintf(w, "\nNOT READY: %d of %d models.\n", notReady, len(reports))
		return exitNotReady
	}
	fmt.Fprintf(w, "\nReady: every model answers and is %s.\n", lifecycleActive)
	return exitReady
}

const usage = `usage:
  preflight [--stack contentapi] [--region us-east-1]
  preflight --text-model ID [--text-profile P] --image-model ID [--image-profile P] --bedrock-region R [--endpoint URL]

Checks, with your AWS credentials, that every model the stack calls is ready:
access granted, lifecycle ACTIVE, and where it is called. Exit status 0 when
all are, 1 when one is not or a check failed, 2 on a usage error.
`
