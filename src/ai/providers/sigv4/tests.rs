//! Vectors from AWS's public SigV4 documentation and test suite (inputs and expected
//! outputs written down by hand): the example secret key `wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY`
//! with access key `AKIDEXAMPLE`.

use super::*;

const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

fn example_credentials() -> Credentials {
    Credentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: SECRET.into(),
        session_token: None,
    }
}

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn the_documented_signing_keys_are_derived() {
    // "Examples of how to derive a signing key for Signature Version 4".
    assert_eq!(
        hex(&signing_key(SECRET, "20120215", "us-east-1", "iam")),
        "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"
    );
    // The IAM ListUsers walkthrough.
    assert_eq!(
        hex(&signing_key(SECRET, "20150830", "us-east-1", "iam")),
        "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"
    );
}

#[test]
fn the_iam_list_users_walkthrough_signs_as_documented() {
    let h = headers(&[
        (
            "Content-Type",
            "application/x-www-form-urlencoded; charset=utf-8",
        ),
        ("Host", "iam.amazonaws.com"),
        ("X-Amz-Date", "20150830T123600Z"),
    ]);
    let input = SigningInput {
        method: "GET",
        path: "/",
        query: "Action=ListUsers&Version=2010-05-08",
        headers: &h,
        body: b"",
        region: "us-east-1",
        service: "iam",
        amz_date: "20150830T123600Z",
        double_encode_path: true,
    };
    let (canonical, signed) = canonical_request(&input);
    assert_eq!(signed, "content-type;host;x-amz-date");
    assert_eq!(
        sha256_hex(canonical.as_bytes()),
        "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59"
    );
    assert_eq!(
        authorization(&example_credentials(), &input),
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
    );
}

fn vanilla(method: &str) -> String {
    let h = headers(&[
        ("Host", "example.amazonaws.com"),
        ("X-Amz-Date", "20150830T123600Z"),
    ]);
    authorization(
        &example_credentials(),
        &SigningInput {
            method,
            path: "/",
            query: "",
            headers: &h,
            body: b"",
            region: "us-east-1",
            service: "service",
            amz_date: "20150830T123600Z",
            double_encode_path: true,
        },
    )
}

#[test]
fn the_test_suites_vanilla_requests_sign_as_published() {
    assert_eq!(
        vanilla("GET"),
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    );
    assert_eq!(
        vanilla("POST"),
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
    );
}

#[test]
fn paths_are_encoded_again_except_slashes() {
    assert_eq!(uri_encode("/model/a%3Ab/x y", true), "/model/a%253Ab/x%20y");
    assert_eq!(uri_encode("a/b", false), "a%2Fb");
}
