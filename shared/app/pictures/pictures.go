// Package pictures is the pictures' bucket, in S3, for the functions that
// store pictures or give their URLs (app.Parts.Pictures): only they link
// S3's client.
package pictures

import (
	"contentapi/shared/app"
	"contentapi/shared/picturebucket"
)

// New is the bucket PICTURES_BUCKET names, in the function's region (at
// S3_ENDPOINT locally, path-style).
func New(cfg app.Config) (app.Pictures, error) {
	g := cfg.Generation
	c, err := picturebucket.New(picturebucket.Config{
		Bucket: g.Bucket, Region: cfg.Region, Endpoint: g.S3Endpoint, PathStyle: g.S3Endpoint != "",
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}
