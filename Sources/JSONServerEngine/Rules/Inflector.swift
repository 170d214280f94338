import Depot

/// English singular and plural of resource names, as json-server derives foreign
/// keys (`posts` → `postId`) and expanded collections (`post` → `posts`).
///
/// Covers the regular rules (`posts`, `categories`, `boxes`, `addresses`) and a
/// few irregular nouns; anything else is taken as it is.
package enum Inflector {
    /// The singular of `word`: `posts` → `post`, `categories` → `category`.
    package static func singular(_ word: String) -> String {
        if let irregular = irregularSingulars[word] { return irregular }
        if let irregular = irregularPlurals[word], irregular == word { return word }
        let lower = word.lowercased()
        if lower.hasSuffix("ies") {
            let keepsIE = lower.count <= 4 || lower.hasSuffix("ovies") || iePlurals.contains(lower)
            return keepsIE ? String(word.dropLast()) : word.dropLast(3) + "y"
        }
        for suffix in ["sses", "shes", "ches", "xes", "zzes"] where lower.hasSuffix(suffix) {
            return String(word.dropLast(2))
        }
        if lower.hasSuffix("ss") || lower.hasSuffix("us") || lower.hasSuffix("is") { return word }
        if lower.hasSuffix("s"), word.count > 1 { return String(word.dropLast()) }
        return word
    }

    /// The plural of `word`: `post` → `posts`, `category` → `categories`.
    package static func plural(_ word: String) -> String {
        if let irregular = irregularPlurals[word] { return irregular }
        if irregularSingulars[word] != nil { return word }
        let lower = word.lowercased()
        if lower.hasSuffix("y"), let before = lower.dropLast().last, !"aeiou".contains(before) {
            return word.dropLast() + "ies"
        }
        for suffix in ["s", "x", "z", "ch", "sh"] where lower.hasSuffix(suffix) {
            if lower.hasSuffix("s"), singular(word) != word { return word }
            return word + "es"
        }
        return word + "s"
    }

    /// Plurals in `-ies` whose singular ends in `-ie`.
    private static let iePlurals: Set<String> = [
        "cookies", "zombies", "selfies", "rookies", "calories", "brownies", "genies", "hippies", "pixies",
        "smoothies", "goalies", "aunties",
    ]

    private static let irregularPlurals: [String: String] = [
        "person": "people", "child": "children", "man": "men", "woman": "women", "mouse": "mice",
        "goose": "geese", "foot": "feet", "tooth": "teeth", "series": "series", "species": "species",
    ]

    private static let irregularSingulars: [String: String] = Dictionary(
        uniqueKeysWithValues: irregularPlurals.filter { $0.key != $0.value }.map { ($0.value, $0.key) })
}
