/// The members of a collection's records that hold another record's id (`postId` in a
/// comment), which DepotOffline rewrites when the record they name was created offline.
/// By default, every member whose name ends in `Id`; a repository names its own:
///
/// ```swift
/// let foreignKeys: ForeignKeys = ["author", "post"]   // in a CRUDRepository
/// ```
///
/// See the article *Defining repositories*.
public struct ForeignKeys: Sendable, Hashable, ExpressibleByArrayLiteral {
    private enum Rule: Sendable, Hashable {
        case endingInID
        case named(Set<String>)
    }

    private let rule: Rule

    private init(_ rule: Rule) { self.rule = rule }

    /// json-server's convention, the default: every member whose name ends in `Id` (`postId`,
    /// `userId`).
    public static let jsonServer = ForeignKeys(.endingInID)

    /// No member holds another record's id.
    public static let none = ForeignKeys(.named([]))

    /// Exactly the members named.
    public static func named(_ members: Set<String>) -> ForeignKeys {
        ForeignKeys(.named(members))
    }

    /// Exactly the members listed: `["author", "post"]`.
    public init(arrayLiteral members: String...) {
        self.init(.named(Set(members)))
    }

    /// Whether the member called `member` holds another record's id.
    public func contains(_ member: String) -> Bool {
        switch rule {
        case .endingInID: return member.hasSuffix("Id")
        case .named(let members): return members.contains(member)
        }
    }

    /// The members named, sorted; `nil` for json-server's convention (a rule, not a list).
    package var names: [String]? {
        switch rule {
        case .endingInID: return nil
        case .named(let members): return members.sorted()
        }
    }
}
