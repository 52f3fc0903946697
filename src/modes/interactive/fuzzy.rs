//! pi's fuzzy matcher, used by `/command` completion and the pickers: a query matches
//! when its characters appear in order in the text (case-insensitive). Lower scores are
//! better: consecutive runs and matches at word starts (after space `-` `_` `.` `/` `:`)
//! are rewarded, gaps and late matches cost a little, an exact match wins outright.
//! Queries like `gpt4` also try the swapped form `4gpt`. This module knows nothing about
//! what is being matched.

/// Score of `query` against `text`, or `None` when it does not match. Lower is better.
pub fn fuzzy_score(query: &str, text: &str) -> Option<f64> {
    let query: Vec<char> = query.to_lowercase().chars().collect();
    let text: Vec<char> = text.to_lowercase().chars().collect();
    if let Some(score) = score_chars(&query, &text) {
        return Some(score);
    }
    let swapped = swap_letters_and_digits(&query)?;
    score_chars(&swapped, &text).map(|s| s + 5.0)
}

/// Whether `query` fuzzily matches `text`.
pub fn fuzzy_matches(query: &str, text: &str) -> bool {
    fuzzy_score(query, text).is_some()
}

fn is_boundary(c: char) -> bool {
    c.is_whitespace() || matches!(c, '-' | '_' | '.' | '/' | ':')
}

fn score_chars(query: &[char], text: &[char]) -> Option<f64> {
    if query.is_empty() {
        return Some(0.0);
    }
    if query.len() > text.len() {
        return None;
    }
    let mut qi = 0;
    let mut score = 0.0;
    let mut last_match: Option<usize> = None;
    let mut run = 0u32;
    for (i, c) in text.iter().enumerate() {
        if qi == query.len() {
            break;
        }
        if *c != query[qi] {
            continue;
        }
        match last_match {
            Some(last) if last + 1 == i => {
                run += 1;
                score -= f64::from(run) * 5.0;
            }
            Some(last) => {
                run = 0;
                score += (i - last - 1) as f64 * 2.0;
            }
            None => run = 0,
        }
        if i == 0 || is_boundary(text[i - 1]) {
            score -= 10.0;
        }
        score += i as f64 * 0.1;
        last_match = Some(i);
        qi += 1;
    }
    if qi < query.len() {
        return None;
    }
    if query == text {
        score -= 100.0;
    }
    Some(score)
}

/// `abc12` → `12abc` and `12abc` → `abc12`; anything else has no swapped form.
fn swap_letters_and_digits(query: &[char]) -> Option<Vec<char>> {
    let split = query
        .iter()
        .position(|c| !c.is_ascii_lowercase())
        .unwrap_or(query.len());
    let (letters, digits) = query.split_at(split);
    if !letters.is_empty() && !digits.is_empty() && digits.iter().all(char::is_ascii_digit) {
        return Some(digits.iter().chain(letters).copied().collect());
    }
    let split = query
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(query.len());
    let (digits, letters) = query.split_at(split);
    if !letters.is_empty() && !digits.is_empty() && letters.iter().all(char::is_ascii_lowercase) {
        return Some(letters.iter().chain(digits).copied().collect());
    }
    None
}

/// Items whose text matches every space-separated token of `query`, best first (ties
/// keep their input order). An empty query keeps everything in order.
pub fn fuzzy_filter<'a, T>(
    items: &'a [T],
    query: &str,
    text: impl Fn(&'a T) -> &'a str,
) -> Vec<&'a T> {
    let tokens: Vec<&str> = query.split_whitespace().collect();
    if tokens.is_empty() {
        return items.iter().collect();
    }
    let mut scored: Vec<(f64, usize, &T)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| {
            let t = text(item);
            let mut total = 0.0;
            for token in &tokens {
                total += fuzzy_score(token, t)?;
            }
            Some((total, i, item))
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, _, item)| item).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn characters_must_appear_in_order() {
        assert!(fuzzy_matches("cmt", "compact"));
        assert!(fuzzy_matches("CMP", "compact"));
        assert!(!fuzzy_matches("tmc", "compact"));
        assert!(!fuzzy_matches("compactx", "compact"));
        assert!(fuzzy_matches("", "anything"));
    }

    #[test]
    fn exact_prefix_and_word_start_matches_rank_first() {
        let names = [
            "session",
            "resume",
            "settings",
            "reload",
            "share",
            "scoped-models",
        ];
        let ranked = fuzzy_filter(&names, "se", |s| s);
        assert_eq!(
            ranked,
            vec![
                &"session",
                &"settings",
                &"share",
                &"scoped-models",
                &"resume"
            ]
        );
        let models = ["scoped-models", "model"];
        assert_eq!(
            fuzzy_filter(&models, "model", |s| s),
            vec![&"model", &"scoped-models"]
        );
        let quit = ["quit", "queue-status", "qwerty-utils-it"];
        assert_eq!(fuzzy_filter(&quit, "quit", |s| s)[0], &"quit");
    }

    #[test]
    fn letter_digit_queries_also_match_swapped() {
        assert!(fuzzy_matches("gpt4", "gpt-4o"));
        assert!(fuzzy_matches("4gpt", "gpt-4o"));
        let direct = fuzzy_score("gpt4", "gpt-4o").unwrap();
        let swapped = fuzzy_score("4gpt", "gpt-4o").unwrap();
        assert!(swapped > direct);
    }

    #[test]
    fn every_token_must_match() {
        let items = ["claude sonnet 4", "claude opus 4", "gpt 4o"];
        assert_eq!(
            fuzzy_filter(&items, "claude op", |s| s),
            vec![&"claude opus 4"]
        );
        assert_eq!(fuzzy_filter(&items, "  ", |s| s).len(), 3);
    }
}
