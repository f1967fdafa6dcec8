package stack

import (
	"contentapi/shared/app"
	"contentapi/shared/app/models"
	"contentapi/shared/app/pictures"
	"contentapi/shared/app/queue"
)

// Parts are every function's parts together (app.Parts): the local stack,
// the tests and the bench serve every function from one process.
var Parts = app.Parts{Models: models.New, Pictures: pictures.New, Queue: queue.New}
