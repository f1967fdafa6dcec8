package app

// KindsOf is kindsOf, for the tests of package app_test.
var KindsOf = kindsOf

// EventTypesOf is eventTypesOf, for the tests of package app_test.
var EventTypesOf = eventTypesOf
