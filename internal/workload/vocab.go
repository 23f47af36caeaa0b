package workload

// Vocabulary holds common English words that the usual BPE tokenizers (GPT, Llama, Mistral, Qwen)
// encode as a single token when preceded by a space. Synthetic prompts and the mockserver's
// replies are made of them, so a word count is a fair token estimate.
var Vocabulary = []string{
	"the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
	"on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
	"had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
	"been", "if", "more", "when", "will", "would", "who", "so", "no", "she", "other", "its",
	"may", "these", "what", "them", "than", "some", "him", "time", "into", "only", "do", "about",
	"out", "my", "could", "also", "any", "then", "first", "new", "two", "like", "our", "over",
	"such", "me", "even", "most", "made", "after", "many", "before", "must", "through", "back",
	"years", "where", "much", "your", "way", "well", "down", "should", "because", "each", "just",
	"those", "people", "how", "too", "little", "state", "good", "very", "make", "world", "still",
	"own", "see", "men", "work", "long", "get", "here", "between", "both", "life", "being",
	"under", "never", "day", "same", "another", "know", "while", "last", "might", "us", "great",
	"old", "year", "off", "come", "since", "against", "go", "came", "right", "used", "take",
	"three", "states", "himself", "few", "house", "use", "during", "without", "again", "place",
	"around", "however", "home", "small", "found", "thought", "went", "say", "part", "once",
	"general", "high", "upon", "school", "every", "does", "got", "united", "left", "number",
	"course", "war", "until", "always", "away", "something", "fact", "though", "water", "less",
	"public", "put", "think", "almost", "hand", "enough", "far", "took", "head", "yet",
	"government", "system", "better", "set", "told", "nothing", "night", "end", "why", "called",
	"data", "eyes", "find", "going", "look", "asked", "later", "knew", "point", "next", "program",
	"city", "business", "give", "group", "toward", "young", "days", "let", "room", "president",
	"side", "social", "given", "present", "several", "order", "national", "possible", "rather",
	"second", "face", "per", "among", "form", "important", "often", "things", "looked", "early",
	"white", "case", "john", "become", "large", "big", "need", "four", "within", "felt", "along",
	"children", "saw", "best", "church", "ever", "least", "power", "development", "light",
}
