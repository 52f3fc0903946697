//! OKLCH and OKHSL colours (pi 1.6 theme files) to sRGB. Both build on Björn Ottosson's
//! Oklab; OKHSL scales saturation by how much chroma the sRGB gamut allows at each hue
//! and lightness, following his published construction (cusp of the gamut triangle,
//! chroma at the gamut edge, the "mid" and "zero" chroma stops). OKLCH colours outside
//! the gamut keep their hue and lightness and lose chroma until they fit, as pi maps
//! them. Results are rounded 8-bit channels.

/// Cube-root LMS to linear sRGB.
const LMS_TO_SRGB: [[f64; 3]; 3] = [
    [
        4.076_741_636_075_958,
        -3.307_711_539_258_063,
        0.230_969_903_182_104_3,
    ],
    [
        -1.268_437_973_285_031_5,
        2.609_757_349_287_688,
        -0.341_319_376_002_657,
    ],
    [
        -0.004_196_076_138_675_6,
        -0.703_418_617_935_936_2,
        1.707_614_694_074_611_7,
    ],
];

/// Oklab to cube-root LMS.
const LAB_TO_LMS: [[f64; 3]; 3] = [
    [1.0, 0.396_337_777_376_174_9, 0.215_803_757_309_913_6],
    [1.0, -0.105_561_345_815_658_6, -0.063_854_172_825_813_3],
    [1.0, -0.089_484_177_529_811_9, -1.291_485_548_019_409_2],
];

/// Per sRGB channel: the (a, b) half-plane where that channel clips first, and the
/// polynomial that approximates the largest saturation (C/L) there.
const SATURATION_FIT: [([f64; 2], [f64; 5]); 3] = [
    (
        [-1.881_703_1, -0.809_365_01],
        [
            1.190_862_77,
            1.765_767_28,
            0.596_626_41,
            0.755_151_97,
            0.567_712_45,
        ],
    ),
    (
        [1.814_440_8, -1.194_452_67],
        [
            0.739_565_15,
            -0.459_544_04,
            0.082_854_27,
            0.125_410_73,
            -0.145_032_04,
        ],
    ),
    (
        [0.131_107_58, 1.813_339_71],
        [
            1.357_336_52,
            -0.009_157_99,
            -1.151_302_1,
            -0.505_596_06,
            0.006_921_67,
        ],
    ),
];

const K1: f64 = 0.206;
const K2: f64 = 0.03;
const K3: f64 = (1.0 + K1) / (1.0 + K2);

fn mul(m: &[[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
    m.map(|row| row[0] * v[0] + row[1] * v[1] + row[2] * v[2])
}

fn oklab_to_linear(lab: [f64; 3]) -> [f64; 3] {
    mul(&LMS_TO_SRGB, mul(&LAB_TO_LMS, lab).map(|v| v * v * v))
}

/// Linear sRGB to rounded 8-bit channels, out-of-gamut values clipped.
fn linear_to_rgb(linear: [f64; 3]) -> (u8, u8, u8) {
    let channel = |v: f64| {
        let encoded = if v > 0.003_130_8 {
            1.055 * v.powf(1.0 / 2.4) - 0.055
        } else {
            12.92 * v
        };
        // In 0..=255 after the clamp, so the cast cannot truncate.
        (encoded.clamp(0.0, 1.0) * 255.0).round() as u8
    };
    (channel(linear[0]), channel(linear[1]), channel(linear[2]))
}

fn in_gamut(linear: [f64; 3]) -> bool {
    const EPSILON: f64 = 1e-7;
    linear
        .iter()
        .all(|c| (-EPSILON..=1.0 + EPSILON).contains(c))
}

/// An OKLCH colour (`l` 0–1, chroma `c` ≥ 0, hue in degrees) in sRGB.
pub fn oklch_to_rgb(l: f64, c: f64, h: f64) -> (u8, u8, u8) {
    let (sin, cos) = h.to_radians().sin_cos();
    let at = |chroma: f64| oklab_to_linear([l, chroma * cos, chroma * sin]);
    let direct = at(c);
    if in_gamut(direct) {
        return linear_to_rgb(direct);
    }
    // Bisect the chroma down to the gamut edge; grey always fits.
    let (mut low, mut high) = (0.0, c);
    let mut best = at(0.0);
    for _ in 0..20 {
        let mid = (low + high) / 2.0;
        let candidate = at(mid);
        if in_gamut(candidate) {
            low = mid;
            best = candidate;
        } else {
            high = mid;
        }
    }
    linear_to_rgb(best)
}

/// How fast each cube-root LMS component changes along the chroma direction (a, b).
fn lms_slopes(a: f64, b: f64) -> [f64; 3] {
    LAB_TO_LMS.map(|row| row[1] * a + row[2] * b)
}

/// The largest saturation inside sRGB for hue direction (a, b): the polynomial guess
/// refined by one Halley step.
fn max_saturation(a: f64, b: f64) -> f64 {
    let channel = SATURATION_FIT
        .iter()
        .position(|([x, y], _)| x * a + y * b > 1.0)
        .unwrap_or(2);
    let [k0, k1, k2, k3, k4] = SATURATION_FIT[channel].1;
    let weights = LMS_TO_SRGB[channel];
    let s = k0 + k1 * a + k2 * b + k3 * a * a + k4 * a * b;
    let slopes = lms_slopes(a, b);
    let base = slopes.map(|k| 1.0 + s * k);
    let dot = |v: [f64; 3]| weights[0] * v[0] + weights[1] * v[1] + weights[2] * v[2];
    let f = dot(base.map(|v| v * v * v));
    let f1 = dot([0, 1, 2].map(|i| 3.0 * slopes[i] * base[i] * base[i]));
    let f2 = dot([0, 1, 2].map(|i| 6.0 * slopes[i] * slopes[i] * base[i]));
    s - f * f1 / (f1 * f1 - 0.5 * f * f2)
}

/// Lightness and chroma of the most saturated sRGB colour of hue (a, b).
fn cusp(a: f64, b: f64) -> (f64, f64) {
    let s = max_saturation(a, b);
    let rgb = oklab_to_linear([1.0, s * a, s * b]);
    let l = (1.0 / rgb[0].max(rgb[1]).max(rgb[2])).cbrt();
    (l, l * s)
}

/// The chroma at which lightness `l` leaves the sRGB gamut along hue (a, b).
fn max_chroma(a: f64, b: f64, l: f64, (cusp_l, cusp_c): (f64, f64)) -> f64 {
    if l <= cusp_l {
        return cusp_c * l / cusp_l;
    }
    // Above the cusp: the triangle's edge, then one Halley step per channel hitting 1.
    let t = cusp_c * (l - 1.0) / (cusp_l - 1.0);
    let slopes = lms_slopes(a, b);
    let lms = slopes.map(|k| l + t * k);
    let cubes = lms.map(|v| v * v * v);
    let first = [0, 1, 2].map(|i| 3.0 * slopes[i] * lms[i] * lms[i]);
    let second = [0, 1, 2].map(|i| 6.0 * slopes[i] * slopes[i] * lms[i]);
    let dot = |row: [f64; 3], v: [f64; 3]| row[0] * v[0] + row[1] * v[1] + row[2] * v[2];
    let step = LMS_TO_SRGB
        .iter()
        .map(|row| {
            let f = dot(*row, cubes) - 1.0;
            let f1 = dot(*row, first);
            let f2 = dot(*row, second);
            let u = f1 / (f1 * f1 - 0.5 * f * f2);
            if u >= 0.0 { -f * u } else { f64::MAX }
        })
        .fold(f64::MAX, f64::min);
    t + step
}

/// OKHSL's chroma stops at Oklab lightness `l` and hue (a, b): zero, mid and max.
fn chroma_stops(l: f64, a: f64, b: f64) -> (f64, f64, f64) {
    let peak = cusp(a, b);
    let c_max = max_chroma(a, b, l, peak);
    let k = c_max / (l * (peak.1 / peak.0)).min((1.0 - l) * (peak.1 / (1.0 - peak.0)));
    let mid_s = 0.115_169_93
        + 1.0
            / (7.447_789_7
                + 4.159_012_4 * b
                + a * (-2.195_573_47
                    + 1.751_984_01 * b
                    + a * (-2.137_049_48 - 10.023_010_43 * b
                        + a * (-4.248_945_61 + 5.387_708_19 * b + 4.698_910_13 * a))));
    let mid_t = 0.112_396_42
        + 1.0
            / (1.613_203_2 - 0.681_243_79 * b
                + a * (0.403_706_12
                    + 0.901_481_23 * b
                    + a * (-0.270_879_43
                        + 0.612_239_9 * b
                        + a * (0.002_992_15 - 0.453_995_68 * b - 0.146_618_72 * a))));
    let c_mid = 0.9
        * k
        * (1.0 / (1.0 / (l * mid_s).powi(4) + 1.0 / ((1.0 - l) * mid_t).powi(4)))
            .sqrt()
            .sqrt();
    let c_zero = (1.0 / (1.0 / (l * 0.4).powi(2) + 1.0 / ((1.0 - l) * 0.8).powi(2))).sqrt();
    (c_zero, c_mid, c_max)
}

/// An OKHSL colour (hue in degrees, saturation and lightness 0–1) in sRGB.
pub fn okhsl_to_rgb(h: f64, s: f64, l: f64) -> (u8, u8, u8) {
    // OKHSL lightness to Oklab lightness (the inverse of Ottosson's toe).
    let lab_l = (l * l + K1 * l) / (K3 * (l + K2));
    let mut lab = [lab_l, 0.0, 0.0];
    if lab_l > 0.0 && lab_l < 1.0 && s > 0.0 {
        let (b, a) = h.rem_euclid(360.0).to_radians().sin_cos();
        let (c0, c_mid, c_max) = chroma_stops(lab_l, a, b);
        let chroma = if s < 0.8 {
            let t = 1.25 * s;
            let k1 = 0.8 * c0;
            t * k1 / (1.0 - (1.0 - k1 / c_mid) * t)
        } else {
            let t = 5.0 * (s - 0.8);
            let k1 = 0.2 * c_mid * c_mid * 1.25 * 1.25 / c0;
            c_mid + t * k1 / (1.0 - (1.0 - k1 / (c_max - c_mid)) * t)
        };
        lab = [lab_l, chroma * a, chroma * b];
    }
    linear_to_rgb(oklab_to_linear(lab))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greys_and_extremes() {
        assert_eq!(okhsl_to_rgb(0.0, 0.0, 0.0), (0, 0, 0));
        assert_eq!(okhsl_to_rgb(120.0, 0.5, 1.0), (255, 255, 255));
        assert_eq!(oklch_to_rgb(1.0, 0.0, 0.0), (255, 255, 255));
        // Far outside the gamut: the hue stays, the chroma goes (pi maps it to white).
        assert_eq!(oklch_to_rgb(1.0, 0.3, 150.0), (255, 255, 255));
    }
}
