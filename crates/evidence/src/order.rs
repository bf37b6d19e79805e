//! Which came first: a time the cluster recorded, or the change time.
//!
//! Kubernetes stamps most times in whole seconds (`startedAt`, `lastTransitionTime`,
//! `creationTimestamp`), and so do most change times (`date -u +%FT%TZ`, a git committer
//! time). A whole-second time stands for any instant in that second, so two of them in the
//! same second cannot be ordered by the clock alone: that is a tie, never "before".

use jiff::{SignedDuration, Timestamp};

/// How a recorded time stands to the change time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Certainly before the change (an earlier second, or a finer time before it).
    Before,
    /// Certainly after it.
    After,
    /// The clock cannot tell: the same second, at the precision the two were recorded with.
    Tie,
}

/// Orders `at` (a time the cluster recorded) against `change`. A time with no sub-second
/// part is taken as stamped to the second, standing for every instant of that second; a
/// time with one is taken as exact.
pub fn order(at: Timestamp, change: Timestamp) -> Order {
    let second = SignedDuration::from_secs(1);
    let latest = |t: Timestamp| {
        if whole_second(t) {
            // The last instant the second stands for: `t + 1s` itself belongs to the next.
            t.checked_add(second - SignedDuration::from_nanos(1))
                .unwrap_or(t)
        } else {
            t
        }
    };
    if latest(at) < change {
        Order::Before
    } else if at > latest(change) {
        Order::After
    } else {
        Order::Tie
    }
}

/// Whether `t` was (as far as can be told) recorded to the second only.
pub fn whole_second(t: Timestamp) -> bool {
    t.subsec_nanosecond() == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> Timestamp {
        text.parse().expect("a timestamp")
    }

    #[test]
    fn whole_seconds_tie_within_their_second() {
        let rows = [
            // (recorded, change, order, why)
            (
                "2026-07-12T10:00:00Z",
                "2026-07-12T10:00:00Z",
                Order::Tie,
                "same whole second",
            ),
            (
                "2026-07-12T09:59:59Z",
                "2026-07-12T10:00:00Z",
                Order::Before,
                "an earlier second",
            ),
            (
                "2026-07-12T10:00:01Z",
                "2026-07-12T10:00:00Z",
                Order::After,
                "a later second",
            ),
            (
                "2026-07-12T10:00:00Z",
                "2026-07-12T10:00:00.400Z",
                Order::Tie,
                "a start stamped to the second may be after a finer change time in it",
            ),
            (
                "2026-07-12T09:59:59Z",
                "2026-07-12T10:00:00.400Z",
                Order::Before,
                "the whole second before a finer change time",
            ),
            (
                "2026-07-12T10:00:01Z",
                "2026-07-12T10:00:00.999Z",
                Order::After,
                "the next second is after any instant of the change's",
            ),
            (
                "2026-07-12T10:00:00.500Z",
                "2026-07-12T10:00:00Z",
                Order::Tie,
                "a finer time inside the change's whole second",
            ),
            (
                "2026-07-12T10:00:00.500Z",
                "2026-07-12T10:00:00.400Z",
                Order::After,
                "two finer times order themselves",
            ),
            (
                "2026-07-12T10:00:00.300Z",
                "2026-07-12T10:00:00.400Z",
                Order::Before,
                "two finer times order themselves",
            ),
        ];
        for (at, change, want, why) in rows {
            assert_eq!(order(t(at), t(change)), want, "{at} vs {change}: {why}");
        }
    }
}
