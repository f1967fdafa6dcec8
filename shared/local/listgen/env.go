package listgen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"contentapi/shared/app"
	"contentapi/shared/local/sam"
)

// variables are the names of the environment variables the template sets,
// by the comment after each key of a marked Variables block
// ("API_KEYS_TABLE: !Ref ApiKeysTable # app.EnvKeysTable"): the Go that
// declares it.
func variables(resources []app.Resource) map[string]string {
	v := map[string]string{
		"app.EnvEndpoint":         app.EnvEndpoint,
		"app.EnvKeysTable":        app.EnvKeysTable,
		"app.EnvRateLimitTable":   app.EnvRateLimitTable,
		"app.EnvIdempotency":      app.EnvIdempotency,
		"app.EnvKeyChecksum":      app.EnvKeyChecksum,
		"app.EnvAuthCache":        app.EnvAuthCache,
		"app.EnvRateLimit":        app.EnvRateLimit,
		"app.EnvLogLevel":         app.EnvLogLevel,
		"app.EnvStack":            app.EnvStack,
		"app.EnvGeneration":       app.EnvGeneration,
		"app.EnvTextModel":        app.EnvTextModel,
		"app.EnvImageModel":       app.EnvImageModel,
		"app.EnvModelPrices":      app.EnvModelPrices,
		"app.EnvBedrockRegion":    app.EnvBedrockRegion,
		"app.EnvGenerationWait":   app.EnvGenerationWait,
		"app.EnvBedrockEndpoint":  app.EnvBedrockEndpoint,
		"app.EnvS3Endpoint":       app.EnvS3Endpoint,
		"app.EnvSQSEndpoint":      app.EnvSQSEndpoint,
		"app.EnvPicturesBucket":   app.EnvPicturesBucket,
		"app.EnvWebhooksTable":    app.EnvWebhooksTable,
		"app.EnvWebhookQueue":     app.EnvWebhookQueue,
		"app.EnvWebhookSlowQueue": app.EnvWebhookSlowQueue,
		"app.EnvWebhookSeal":      app.EnvWebhookSeal,
	}
	for _, k := range app.KindsOf(resources) {
		v[fmt.Sprintf("app.EnvDefaultMonthly(%s)", k)] = app.EnvDefaultMonthly(k)
	}
	for _, r := range resources {
		v[r.Def.Name+".Resource TableEnv"] = r.TableEnv()
	}
	return v
}

// checkEnvironment refuses a template that gives a function less than
// app.DeployedEnv says it reads, or that sets in a function's own
// Environment a variable the function does not read: each function gets
// what it needs and, of the tables, only those.
func checkEnvironment(tmpl *sam.Template, resources []app.Resource) error {
	var errs []string
	global, err := literalVariables("the Globals' Function", tmpl.Globals["Function"])
	if err != nil {
		return err
	}
	common, _ := app.DeployedEnv(resources, "")
	declared := slices.Collect(maps.Values(variables(resources)))
	for _, name := range slices.Sorted(maps.Keys(global)) {
		if slices.Contains(declared, name) && !slices.Contains(common, name) {
			errs = append(errs, fmt.Sprintf("the Globals give every function %s, which not every function reads (app.DeployedEnv)", name))
		}
	}
	for _, f := range tmpl.Functions() {
		vars, err := literalVariables(f.LogicalID, tmpl.Resources[f.LogicalID].Properties)
		if err != nil {
			return err
		}
		common, own := app.DeployedEnv(resources, f.LogicalID)
		for _, name := range slices.Concat(common, own) {
			if _, ok := f.Env()[name]; !ok {
				errs = append(errs, fmt.Sprintf("%s reads %s, which the template does not set", f.LogicalID, name))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(vars)) {
			if _, overrides := global[name]; !overrides && !slices.Contains(own, name) {
				errs = append(errs, fmt.Sprintf("%s is given %s, which it does not read (app.DeployedEnv)", f.LogicalID, name))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("environment: %s", strings.Join(errs, "; "))
	}
	return nil
}

// literalVariables is the Environment's Variables of properties, where
// names them. No Environment, or one without Variables, sets nothing: a
// function that reads a variable is then refused above for not being given
// it. An Environment or Variables that is not a mapping written out (an
// intrinsic such as !If, which sam reads as {"Fn::If": ...}) is refused, as
// what it sets cannot be read here.
func literalVariables(where string, properties map[string]any) (map[string]any, error) {
	m, path := properties, where+"'s "
	for i, key := range []string{"Environment", "Variables"} {
		v, ok := m[key]
		if !ok {
			return nil, nil
		}
		if i > 0 {
			path += "."
		}
		path += key
		next, ok := v.(map[string]any)
		if !ok || intrinsic(next) {
			return nil, fmt.Errorf("environment: %s is not a mapping written out; listgen reads only literal Variables", path)
		}
		m = next
	}
	return m, nil
}

// intrinsic says whether m is a CloudFormation function as sam reads one:
// a single key, Ref or Fn::Something.
func intrinsic(m map[string]any) bool {
	if len(m) != 1 {
		return false
	}
	for k := range m {
		return k == "Ref" || strings.HasPrefix(k, "Fn::")
	}
	return false
}

// variableNodes are variables as the scalars listgen declares.
func variableNodes(resources []app.Resource) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for label, name := range variables(resources) {
		out[label] = plain("!!str", name)
	}
	return out
}
