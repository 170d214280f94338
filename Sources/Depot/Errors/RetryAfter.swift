import Foundation

/// Reading of the `Retry-After` header (RFC 9110 §10.2.3).
enum RetryAfter {
    /// The delay the server asks for, in seconds: the header's delta-seconds, or its
    /// HTTP date minus the response's `Date` (or now, without one). Never negative;
    /// `nil` when absent or unreadable.
    static func seconds(in headers: HTTPHeaders, now: Date = Date()) -> TimeInterval? {
        guard let value = headers["Retry-After"]?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Int(value) { return TimeInterval(max(0, seconds)) }
        guard let date = HTTPDate.parse(value) else { return nil }
        let reference = headers["Date"].flatMap(HTTPDate.parse) ?? now
        return max(0, date.timeIntervalSince(reference))
    }
}

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms.
public enum HTTPDate {
    /// Parses an HTTP date, or returns `nil`.
    public static func parse(_ text: String) -> Date? {
        // HTTP dates are short printable ASCII. Nothing else reaches DateFormatter: on Linux
        // it traps on a parseable date next to a combining mark ("S\u{301}un, 06 Nov …").
        guard text.utf8.count <= 64, text.utf8.allSatisfy({ (0x20...0x7e).contains($0) }) else { return nil }
        for format in formats {
            if let date = formatter(format).date(from: text) { return date }
        }
        return nil
    }

    /// Formats `date` as an IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func format(_ date: Date) -> String {
        formatter(formats[0]).string(from: date)
    }

    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy",
    ]

    /// A fresh formatter: `DateFormatter` is not safe to share between threads.
    private static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }
}
