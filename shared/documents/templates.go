package documents

// Templates are the original app's 52 document templates, by id, named as
// in the seed (later versions of the app renamed 33 and 34, and clients of
// this API know the seed's names).
var Templates = [...]string{
	1: "Freestyle", 2: "About us", 3: "Advertisement", 4: "Article", 5: "Blog intro",
	6: "Blog outline", 7: "Blog outro", 8: "Blog paragraph", 9: "Blog post", 10: "Blog section",
	11: "Blog talking points", 12: "Blog title", 13: "Call to action", 14: "Content rewrite",
	15: "Content summary", 16: "FAQ", 17: "Hashtags", 18: "Headline", 19: "How it works",
	20: "Meta description", 21: "Meta keywords", 22: "Mission statement", 23: "Newsletter",
	24: "Pain-Agitate-Solution", 25: "Paragraph", 26: "Press release", 27: "Social post",
	28: "Social post caption", 29: "Startup ideas", 30: "Startup names", 31: "Subheadline",
	32: "Testimonial", 33: "Tweet", 34: "Twitter thread", 35: "Value proposition",
	36: "Video description", 37: "Video script", 38: "Video tags", 39: "Video title",
	40: "Vision statement", 41: "Product sheet", 42: "Welcome email", 43: "Push notification",
	44: "Blog listicle", 45: "Content grammar", 46: "Blog tags", 47: "Pros and cons",
	48: "Google advertisement", 49: "Facebook advertisement", 50: "Job description", 51: "Review",
	52: "Feature section",
}

// FreestyleID is the template of a document that names none.
const FreestyleID = 1
