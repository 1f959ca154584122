//! The binned sums' tests: order and split independence, exactness, the vector paths' bits.

use super::*;

/// A simple xorshift for test data.
fn rng(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn binned(t: &[f64]) -> Binned {
    Binned::sum(t.len(), |i| t[i])
}

#[test]
fn order_and_split_do_not_change_the_bits() {
    let mut r = rng(7);
    // terms over many scales, both signs, with cancellation
    let t: Vec<f64> = (0..10_007)
        .map(|i| {
            let m = r() - 0.5;
            let e = ((r() * 60.0) as i32) - 30;
            m * 2f64.powi(e) * if i % 97 == 0 { 1e12 } else { 1.0 }
        })
        .collect();
    let whole = binned(&t);
    let v = whole.value();
    // reversed, shuffled, split into uneven pieces merged in several orders
    let mut rev = t.clone();
    rev.reverse();
    assert_eq!(binned(&rev).value().to_bits(), v.to_bits());
    let mut sh = t.clone();
    let mut rr = rng(3);
    for i in (1..sh.len()).rev() {
        let j = (rr() * (i + 1) as f64) as usize;
        sh.swap(i, j);
    }
    assert_eq!(binned(&sh).value().to_bits(), v.to_bits());
    for cuts in [[1usize, 2, 3000], [17, 5000, 9000], [0, 0, 10_006]] {
        let parts = [
            &t[..cuts[0]],
            &t[cuts[0]..cuts[1]],
            &t[cuts[1]..cuts[2]],
            &t[cuts[2]..],
        ];
        let mut a = Binned::new();
        for p in parts {
            a.merge(&binned(p));
        }
        assert_eq!(a.value().to_bits(), v.to_bits());
        let mut b = Binned::new();
        for p in parts.iter().rev() {
            b.merge(&binned(p));
        }
        assert_eq!(a, b, "the merged states are equal, not only their values");
        // through records, as the reduction sends them
        let mut rec = vec![0.0; RECORD];
        binned(parts[3]).to_record(&mut rec);
        let mut other = vec![0.0; RECORD];
        binned(parts[0]).to_record(&mut other);
        Binned::merge_records(&mut rec, &other);
        let mut c = Binned::from_record(&rec);
        c.merge(&binned(parts[1]));
        c.merge(&binned(parts[2]));
        assert_eq!(c.value().to_bits(), v.to_bits());
    }
    // one term at a time
    let mut one = Binned::new();
    for &x in &sh {
        one.add(x);
    }
    assert_eq!(one.value().to_bits(), v.to_bits());
    // accurate: against an exact sum of the same terms (i128 fixed point at 2^-1100 is too
    // wide; compare with a compensated sum instead)
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for &x in &t {
        let y = x - c;
        let z = s + y;
        c = (z - s) - y;
        s = z;
    }
    assert!((v - s).abs() <= 1e-15 * t.iter().map(|x| x.abs()).sum::<f64>());
}

#[test]
fn exact_where_doubles_are_exact_and_cancellation() {
    assert_eq!(binned(&[]).value(), 0.0);
    assert_eq!(binned(&[1.0, 2.0, 3.0]).value(), 6.0);
    assert_eq!(binned(&[-0.0]).value().to_bits(), 0.0f64.to_bits());
    // 1e16 + 1 - 1e16: exact here, 0 or 2 in plain doubles depending on order
    assert_eq!(binned(&[1e16, 1.0, -1e16]).value(), 1.0);
    assert_eq!(binned(&[1.0, 1e16, -1e16]).value(), 1.0);
    // tiny terms under a huge one are dropped the same way in any order
    let t = [1e300, 1e-300, -1e300, 3.0];
    assert_eq!(binned(&t).value(), 0.0, "3 is below the kept bins of 1e300");
    assert_eq!(binned(&[3.0, -1e300, 1e-300, 1e300]).value(), 0.0);
    // within 120 bits of the largest term: kept
    assert_eq!(binned(&[1e20, 3.0, -1e20]).value(), 3.0);
    // subnormals
    let d = f64::from_bits(1);
    assert_eq!(binned(&[d * 8.0, d * 4.0]).value(), d * 12.0);
    // many equal terms: the carries
    let ones = vec![1.0f64; 1 << 20];
    assert_eq!(binned(&ones).value(), (1u64 << 20) as f64);
    let big = vec![1e300f64; 5000];
    let v = binned(&big).value();
    assert!(
        (v - 5000.0 * 1e300).abs() <= 2.0 * f64::EPSILON * v,
        "{v:e}"
    );
}

#[test]
fn nonfinite_and_huge_terms() {
    assert!(binned(&[1.0, f64::NAN, 2.0]).value().is_nan());
    assert_eq!(binned(&[1.0, f64::INFINITY]).value(), f64::INFINITY);
    assert!(binned(&[f64::INFINITY, f64::NEG_INFINITY]).value().is_nan());
    assert_eq!(binned(&[f64::MAX, 1.0]).value(), f64::INFINITY);
    assert_eq!(binned(&[-f64::MAX]).value(), f64::NEG_INFINITY);
    // just below the limit: summed in the bins
    let below = limit() / 2.0;
    assert_eq!(binned(&[below, below / 2.0]).value(), 1.5 * below);
    let mut a = binned(&[1.0]);
    a.merge(&binned(&[f64::NAN]));
    assert!(a.value().is_nan());
}

#[test]
fn vector_paths_have_the_scalar_bits() {
    let mut r = rng(11);
    let t: Vec<f64> = (0..4096).map(|_| (r() - 0.5) * 1e6).collect();
    let top = top_for(1e6);
    let fresh = || Lanes::new(top).s;
    let mut a = fresh();
    extract(&mut a, &t);
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            let mut b = fresh();
            // SAFETY: the CPU has AVX-512F (checked just above)
            unsafe { extract_avx512(&mut b, &t) };
            assert_eq!(a, b);
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            let mut b = fresh();
            // SAFETY: the CPU has AVX2 (checked just above)
            unsafe { extract_avx2(&mut b, &t) };
            assert_eq!(a, b);
        }
    }
    let y: Vec<f64> = (0..4096).map(|_| r() - 0.3).collect();
    let mut p = vec![0.0; 4096];
    let (mx, bad) = products(&t, &y, &mut p);
    let (mx2, bad2) = scan(&p);
    assert_eq!((mx, bad), (mx2, bad2));
    assert!(
        p.iter()
            .zip(t.iter().zip(&y))
            .all(|(v, (a, b))| *v == a * b)
    );
    let direct = Binned::sum(4096, |i| t[i] * y[i]);
    assert_eq!(Binned::sum_products(&t, &y), direct);
}

#[test]
fn top_bins() {
    assert_eq!(top_for(0.0), J_LOW);
    for e in [-1000, -500, -1, 0, 1, 52, 500, 1000] {
        let x = 2f64.powi(e);
        for v in [x, x * 1.999] {
            let j = top_for(v);
            let cap = pow2(j * W + G_MIN + W - 1);
            assert!(v < cap, "{v:e} under bin {j}'s capacity");
            if j > J_LOW {
                assert!(
                    v >= pow2((j - 1) * W + G_MIN + W - 1),
                    "{v:e}: bin {j} is the lowest"
                );
            }
        }
    }
}
