/// What a foreground session does to the radio (`session.network`).
package enum SessionNetworkModel: String, Sendable, CaseIterable {
  /// By app category: a session of a networked app uses the network in
  /// bursts (one at the open, then user actions at random through the
  /// session); a session of an offline app (dialer, camera, settings, a
  /// local music player) does not. The default.
  case category
  /// Every open keeps the radio connected for its whole session, whatever
  /// the app: an upper bound on the radio time the user's own activity
  /// lends to background fetches.
  case whole
  /// Every open makes one burst at the open, nothing after.
  case open
}

/// When an app whose content the replay models talks to its server at an
/// open (`session.open_exchange`): the exchange a stale open's foreground
/// refresh rides, and whose promotion and tail a fetch just before the
/// open shares.
package enum OpenExchange: String, Sendable, CaseIterable {
  /// At every open, fresh or not: a burst of ``SessionNetworkParameters/burstS``
  /// at the open, as apps that check for new content at each launch do
  /// (the default; see `docs/parameters.md`).
  case always
  /// Only at an open whose content is older than the server's: the
  /// exchange is the foreground refresh itself, on a radio of its own
  /// unless something else holds it; an open a prefetch made fresh makes
  /// none, and lends no radio time to anyone.
  case whenStale = "when_stale"
  /// Never: the app shows what the device holds (no foreground refresh),
  /// so only background fetches bring content.
  case none
}

/// The parameters of the session network model and the app categories it
/// reads (``WorldParameters/sessions``).
///
/// Sources for the shape: interactive apps exchange data in bursts driven
/// by the user's actions, whose inter-arrival times are roughly
/// exponential on a timescale of seconds (Tadrous & Sabharwal, WiOpt 2016,
/// 1,500 interactive sessions; M); a few apps carry most of a phone's
/// traffic and many sessions move no data at all (Falaki et al., IMC 2010;
/// M). The numbers are not verified (NV): sweep them (`session.*`).
package struct SessionNetworkParameters: Sendable, Equatable {
  /// Which model.
  package var model = SessionNetworkModel.category
  /// When a modelled app talks to its server at an open. Its other
  /// session traffic (user actions) follows its category like any app's.
  package var openExchange = OpenExchange.always
  /// Mean time between network actions of a networked session, s
  /// (exponential gaps; NV).
  package var actionIntervalS = 30.0
  /// Radio activity of one burst (the open's, or an action's), s (NV).
  package var burstS = 1.0
  /// Probability that a session of an app of a networked category uses
  /// the network (messaging, social, browser, mail, maps, video, store).
  package var networkedShare = 1.0
  /// The same for an app of an offline category (dialer, contacts, SMS,
  /// settings, camera, gallery, local media, clock, calendar, files).
  package var offlineShare = 0.0
  /// The same for an app in neither list.
  package var otherShare = 0.5
  /// Background traffic added to every trace, per hour: other apps' and
  /// the system's transfers as a homogeneous Poisson process, on top of
  /// the trace's `wake` rows (0: only those; NV otherwise, as the
  /// synthetic population's wakes).
  package var backgroundWakesPerHour = 0.0
  /// Radio activity of one such transfer, s (NV).
  package var backgroundWakeS = 5.5

  package init() {}

  /// The probability that a session of the app named `app` uses the
  /// network.
  package func share(app: String) -> Double {
    switch AppCategory(app) {
    case .networked: networkedShare
    case .offline: offlineShare
    case .other: otherShare
    }
  }
}

/// Whether an app's foreground sessions use the data network, from its
/// package (Android) or bundle (iOS) name.
///
/// A default list by name fragments; apps in neither list get
/// ``SessionNetworkParameters/otherShare``.
package enum AppCategory: Sendable, Equatable {
  case networked, offline, other

  /// Fragments of names of apps that talk to a server in the foreground.
  static let networkedFragments = [
    "whatsapp", "viber", "naver.line", "tencent.mm", "sgiggle", "kik", "skype", "talk", "voxer", "telegram",
    "messenger", "facebook", "instagram", "twitter", "apps.plus", "snapchat", "tiktok", "reddit", "linkedin",
    "chrome", "browser", "opera", "firefox", "puffin", "safari", ".mail", "android.gm", "email", "outlook",
    "maps", "youtube", "netflix", "spotify", "soundcloud", "vending", "bazaar", "store", "quicksearchbox",
    "weather", "news", "dropbox", "drive", "psiphon", "imvideo", ".im", "chat", "tweet", "feed", "gmail", "musically",
  ]
  /// Fragments of names of apps whose sessions need no data network.
  static let offlineFragments = [
    "dialer", "contacts", "phonebook", "mms", "gosms", "conversations", "settings", "camera", "gallery", "album",
    "cooliris", "music", "calendar", "clock", "alarm", "calculator", "myfiles", "filemanager", "estrongs",
    "sleepbot", "dict", "reader", "callrecorder", "notes", "flashlight", "talkback",
  ]

  /// Whole names: FetchLab's synthetic pool (`SyntheticPopulation`'s
  /// generic app names) and iOS bundles the fragments miss. Checked first.
  static let exactNames: [String: AppCategory] = {
    var t: [String: AppCategory] = [:]
    for n in [
      "chat", "messages", "social", "browser", "mail", "news", "video", "maps", "weather", "shopping", "tv", "bank",
      "podcasts", "videocall", "store", "workchat", "forum", "rideshare", "food", "dating", "sports", "stocks",
      "transit", "travel", "smarthome", "com.google.gmail", "ph.telegra.telegraph",
    ] { t[n] = .networked }
    for n in [
      "phone", "settings", "music", "camera", "photos", "clock", "calendar", "contacts", "notes", "reader",
      "calculator", "files", "com.apple.mobilephone", "com.apple.preferences",
    ] { t[n] = .offline }
    return t
  }()

  /// The category of the app named `name` (case-insensitive): a whole name
  /// of ``exactNames``, else by fragments, where offline fragments win, so
  /// that `com.android.music` is offline although streaming apps would
  /// match "music" too only through their own names.
  package init(_ name: String) {
    let n = name.lowercased()
    if let c = AppCategory.exactNames[n] {
      self = c
    } else if AppCategory.offlineFragments.contains(where: n.contains) && !AppCategory.streaming(n) {
      self = .offline
    } else if AppCategory.networkedFragments.contains(where: n.contains) {
      self = .networked
    } else {
      self = .other
    }
  }

  /// Streaming services whose names hold an offline fragment.
  static func streaming(_ n: String) -> Bool {
    ["spotify", "soundcloud", "youtube", "deezer", "pandora", "music.youtube", "apple.music", "musically"].contains(where: n.contains)
  }
}
