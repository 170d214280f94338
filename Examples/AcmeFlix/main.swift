import Depot
import DepotInMemory
import Foundation

// AcmeFlix: a client that knows one URL, the API's root, and does only what the
// server offers it. It runs against the in-memory server of AcmeFlixServer.swift,
// or, given `--base-url`, against any server that speaks the same grammar.
let arguments = CommandLine.arguments
let root: URL
let backend: any Backend
let server: InMemoryBackend?
if let flag = arguments.firstIndex(of: "--base-url") {
    guard arguments.indices.contains(flag + 1), let url = URL(string: arguments[flag + 1]), url.host != nil
    else {
        print("usage: swift run AcmeFlix [--base-url http://127.0.0.1:8000/api/]")
        exit(2)
    }
    root = url
    backend = URLSessionBackend(baseURL: url)
    server = nil
    print("Using the AcmeFlix API at \(url)")
} else {
    let memory = try AcmeFlixServer.makeBackend()
    root = AcmeFlixServer.root
    server = memory
    backend = memory
    print("Using an in-memory AcmeFlix server at \(root)")
}

let acmeflix = HypermediaClient(backend: backend, root: root)

/// The relations a resource offers, for printing.
func offers<Entity>(_ resource: Resource<Entity>) -> String {
    resource.relations.isEmpty ? "nothing" : resource.relations.joined(separator: ", ")
}

/// A JSON value as compact text, for printing.
func json(_ value: [String: JSONValue]) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "?"
}

/// A progress line: `[##########----------]  52%  150 of 289 KB`.
func progressBar(_ progress: TransferProgress) -> String {
    let fraction = progress.fractionCompleted ?? 0
    let filled = Int(fraction * 20)
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: 20 - filled)
    let total = progress.totalBytes.map { " of \($0 / 1024) KB" } ?? ""
    let percent = String(Int(fraction * 100)).leftPadded(to: 3)
    return "[\(bar)] \(percent)%  \(progress.completedBytes / 1024)\(total)"
}

extension String {
    /// The string with spaces in front, to `width` characters.
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}

/// How many requests reached the in-memory server, for showing that none was sent.
func requestCount() -> Int? {
    server?.requests.count
}

do {
    print("\n== The root: the only URL the client knows")
    let home = try await acmeflix.fetchRoot().value
    print("  offers: \(offers(home))")

    print("\n== The library")
    let library = try await acmeflix.follow("library", from: home, as: Library.self).value
    print("  \(library.count) movies; the library offers: \(offers(library))")
    let summaries = try library.embedded("movies", as: MovieSummary.self)
    for movie in summaries {
        print("  #\(movie.id) \(movie.title) (\(movie.year))  offers: \(offers(movie))")
    }

    print("\n== Each movie, as a UI would show it")
    var movies: [Resource<Movie>] = []
    for summary in summaries {
        let movie = try await acmeflix.follow("self", from: summary, as: Movie.self).value
        movies.append(movie)
        // What a screen does with capabilities: show an action only when it is offered.
        let rent = movie.ifAvailable("rent") { _ in
            "[Rent]"
        } else: {
            "(out of stock)"
        }
        let rate = movie.ifAvailable("rate") { _ in
            "[Rate]"
        } else: {
            ""
        }
        print(
            "  \(movie.title): \(movie.copiesAvailable) in stock  \(rent) \(rate)  offers: \(offers(movie))")
    }

    print("\n== Posters, downloaded into the poster cache with a progress line")
    let posterCache = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0]
        .appendingPathComponent("AcmeFlix/Posters", isDirectory: true)
    // In process, answers are instant: a little latency lets the progress line move.
    server?.latency = 0.15
    for movie in movies {
        let file = posterCache.appendingPathComponent("\(movie.id).svg")
        if FileManager.default.fileExists(atPath: file.path) {
            print("  \(movie.title): cached at \(file.path)")
            continue
        }
        let progress = ProgressHandler { progress in
            print("\r  \(movie.title): \(progressBar(progress))", terminator: "")
            fflush(nil)  // every stream: the line is shown as it changes
        }
        let poster = try await acmeflix.download("poster", from: movie, to: file, progress: progress).value
        let size = (try? FileManager.default.attributesOfItem(atPath: poster.path)[.size] as? Int) ?? 0
        let saved = "  \(movie.title): \(size / 1024) KB saved to \(poster.path)"
        // Spaces cover what remains of the longer progress line.
        print("\r" + saved + String(repeating: " ", count: max(0, 64 - saved.count)))
    }
    server?.latency = 0
    print("  (run again: the posters come from the cache)")

    print("\n== Rent a movie that is in stock")
    guard let pick = movies.first(where: { $0.has("rent") }) else {
        print("  nothing can be rented right now")
        exit(0)
    }
    let cart = try await acmeflix.follow("rent", from: pick, as: Cart.self).value
    print("  rented \(pick.title); the cart holds \(cart.itemCount) movie(s) and offers: \(offers(cart))")
    let after = try await acmeflix.follow("self", from: pick, as: Movie.self).value
    print("  \(after.title) now: \(after.copiesAvailable) in stock, offers: \(offers(after))")

    print("\n== Try to rent movies that are out of stock")
    for movie in [after] + movies where !movie.has("rent") {
        let before = requestCount()
        do throws(ServiceError) {
            _ = try await acmeflix.follow("rent", from: movie, as: Cart.self).value
        } catch .invalidRequest(let reason) {
            // No `rent` link: the client does not guess a URL, and sends nothing.
            print("  \(movie.title): \(reason)")
            if let before, let after = requestCount() {
                print(
                    "    nothing was sent (requests received by the server: \(before) before, \(after) after)"
                )
            }
        } catch {
            print("  \(movie.title): \(error.localizedDescription)")
        }
    }

    print("\n== Rate a movie")
    if let rateable = movies.first(where: { $0.has("rate") }),
        let rate = rateable.link("rate")
    {
        print(
            "  \(rateable.title) offers \(rate.method.rawValue) \(rate.href) \(json(rate.parameters ?? [:]))")
        let rated = try await acmeflix.follow(rate, with: ["rating": 5], as: Movie.self).value
        let average = rated.rating.map { String(format: "%.1f", $0) } ?? "none"
        print("  rated it 5: average \(average) from \(rated.ratingCount) rating(s)")
    }
    let unrateable = movies.filter { !$0.has("rate") }.map(\.title)
    print("  not open for rating: \(unrateable.isEmpty ? "none" : unrateable.joined(separator: ", "))")

    print("\n== Back to the root, then empty the cart")
    let homeAgain = try await acmeflix.fetchRoot().value
    print("  the root now offers: \(offers(homeAgain))")
    var currentCart = try await acmeflix.follow("cart", from: homeAgain, as: Cart.self).value
    print("  the cart holds \(currentCart.itemCount) movie(s) and offers: \(offers(currentCart))")
    for item in try currentCart.embedded("items", as: CartItem.self) {
        print("  \(item.title) offers: \(offers(item))")
        currentCart = try await acmeflix.follow("delete", from: item, as: Cart.self).value
        print("  removed \(item.title); the cart holds \(currentCart.itemCount) movie(s)")
    }
    let restocked = try await acmeflix.follow("self", from: pick, as: Movie.self).value
    print("  \(restocked.title) is back: \(restocked.copiesAvailable) in stock, offers: \(offers(restocked))")

    if let server {
        print("\n== What the server received (\(server.requests.count) requests)")
        for request in server.requests {
            let body = request.body.flatMap { String(data: $0, encoding: .utf8) } ?? ""
            print("  \(request.method.rawValue) /\(request.path) \(body)")
        }
    }
} catch {
    print("error: \(error.localizedDescription)")
    exit(1)
}
