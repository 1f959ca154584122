//! The compact layouts ([`super::sell`], [`super::narrow`]) against the CSR loop: every product,
//! block of rows, fused dot, entry and adjoint has the CSR block's bits.

use super::narrow::Narrow;
use super::sell::{Sell, Shape};
use super::{Arr, Compact, Idx, LocalCsr};
use crate::scalar::Scalar;
use crate::vector::ops::SumOrder;

/// A small generator (splitmix64) for reproducible test data.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

/// A block of `nrows` x `ncols` whose row lengths vary from 0 to `maxlen` (runs of equal
/// lengths, as in a mesh, and isolated long rows), with sorted distinct columns: anywhere, or
/// with `near` within `near` columns of the row's place on the diagonal but for one column
/// anywhere in about one row of 16 (the rows a 16-bit offset cannot reach).
fn block(
    rng: &mut Rng,
    nrows: usize,
    ncols: usize,
    maxlen: usize,
    near: Option<usize>,
) -> LocalCsr<f64> {
    let (mut p, mut i, mut v) = (vec![0i32], Vec::new(), Vec::new());
    let mut len = 0;
    for r in 0..nrows {
        if rng.below(6) == 0 {
            len = rng.below(maxlen + 1).min(ncols);
        }
        let mut col = |k: usize| match near {
            Some(w) if k > 0 || rng.below(16) != 0 => {
                let d = r * ncols / nrows;
                (d.saturating_sub(w) + rng.below(2 * w + 1)).min(ncols - 1) as i32
            }
            _ => rng.below(ncols) as i32,
        };
        let mut cols: Vec<i32> = (0..len).map(&mut col).collect();
        cols.sort_unstable();
        cols.dedup();
        for c in cols {
            i.push(c);
            v.push(rng.unit() * 8.0);
        }
        p.push(i.len() as i32);
    }
    let b = LocalCsr::new(
        nrows,
        ncols,
        Idx::I32(Arr::Owned(p)),
        Idx::I32(Arr::Owned(i)),
        Arr::Owned(v),
        "test block",
    )
    .unwrap();
    assert!(b.compact.is_none());
    b
}

/// The same block in SELL-8 storage laid out as `shape` says (`None`: with 16-bit columns, CSR's
/// rows).
fn compact(b: &LocalCsr<f64>, shape: Option<Shape>) -> LocalCsr<f64> {
    try_compact(b, shape).unwrap_or_else(|| panic!("no compact layout for {}x{}", b.nrows, b.ncols))
}

/// [`compact`], or None where that layout does not apply.
fn try_compact(b: &LocalCsr<f64>, shape: Option<Shape>) -> Option<LocalCsr<f64>> {
    let c = b.to_csr().unwrap();
    let s = match (&c.indptr, &c.indices, shape) {
        (Idx::I32(p), Idx::I32(i), Some(shape)) => {
            let s = Sell::build(
                p.as_slice(),
                i.as_slice(),
                c.values.as_slice(),
                c.ncols,
                0,
                shape,
            );
            if let Some(s) = &s {
                let want = (
                    shape.sort.unwrap_or(s.shape().0),
                    shape.narrow.unwrap_or(s.shape().1),
                );
                assert_eq!(s.shape(), want);
            }
            s.map(Compact::Sell)
        }
        (Idx::I32(p), Idx::I32(i), None) => {
            Narrow::from_csr(p.as_slice(), i.as_slice(), c.values.as_slice(), c.ncols)
                .map(Compact::Narrow)
        }
        _ => unreachable!(),
    };
    let mut c = c;
    c.compact = Some(s?);
    c.indptr = Idx::I32(Arr::Owned(Vec::new()));
    c.indices = Idx::I32(Arr::Owned(Vec::new()));
    c.values = Arr::Owned(Vec::new());
    Some(c)
}

/// Every product of the chunked block (whole, blocks of rows that start and end inside a
/// chunk or a sorting window, adding, with the dot, one chain or split sums), sorted or not, with
/// 32-bit or 16-bit columns, has the CSR block's bits.
#[test]
fn chunked_products_have_the_csr_bits() {
    let mut rng = Rng(7);
    for (nrows, ncols, maxlen) in [
        (203, 190, 9),
        (96, 300, 40),
        (1003, 2000, 70),
        (517, 600, 20),
        (37, 37, 20),
        (8, 5, 5),
        (1, 3, 3),
    ] {
        let a = block(&mut rng, nrows, ncols, maxlen, None);
        for sort in [false, true] {
            for narrow in [false, true] {
                let shape = Shape {
                    sort: Some(sort),
                    narrow: Some(narrow),
                };
                same_products(&mut rng, &a, &compact(&a, Some(shape)));
            }
        }
        same_products(&mut rng, &a, &compact(&a, Some(Shape::default())));
    }
}

/// The same with 16-bit columns, on blocks whose rows reach up to 70,000 columns around their
/// diagonal (so some need the 32-bit side list) and on blocks of few columns.
#[test]
fn narrow_products_have_the_csr_bits() {
    let mut rng = Rng(11);
    for (nrows, ncols, maxlen, near) in [
        (203, 190, 30, None),
        (96, 300, 40, None),
        (400, 500_000, 70, Some(30_000)),
        (300, 300_000, 24, Some(20_000)),
        (37, 37, 20, None),
        (64, 40, 40, None),
    ] {
        let a = block(&mut rng, nrows, ncols, maxlen, near);
        let s = compact(&a, None);
        if let Some(Compact::Narrow(n)) = &s.compact {
            // the wide blocks hold rows of both kinds
            assert_eq!(near.is_some(), !n.wide.is_empty(), "{nrows}x{ncols}");
            assert!(
                near.is_none() || n.wide.len() < nrows / 4,
                "{}",
                n.wide.len()
            );
        }
        same_products(&mut rng, &a, &s);
    }
}

/// `s` (a compact layout of `a`) against `a`, bit for bit.
fn same_products(rng: &mut Rng, a: &LocalCsr<f64>, s: &LocalCsr<f64>) {
    let (nrows, ncols) = (a.nrows, a.ncols);
    {
        assert_eq!(s.nnz(), a.nnz());
        let x: Vec<f64> = (0..ncols).map(|_| rng.unit()).collect();
        let w: Vec<f64> = (0..nrows).map(|_| rng.unit()).collect();
        let y0: Vec<f64> = (0..nrows).map(|_| rng.unit()).collect();
        for sequential in [false, true] {
            let _order = SumOrder::set(sequential);
            for (r0, r1) in [
                (0, nrows),
                (3.min(nrows), nrows),
                (0, nrows - nrows / 3),
                (nrows / 5, nrows - nrows / 7),
            ] {
                for add in [false, true] {
                    let (mut ya, mut ys) = (y0[r0..r1].to_vec(), y0[r0..r1].to_vec());
                    let da = a.mult_rows::<true>(&x, &mut ya, r0, add, &w[r0..r1]);
                    let ds = s.mult_rows::<true>(&x, &mut ys, r0, add, &w[r0..r1]);
                    let bits = |v: &[f64]| v.iter().map(|z| z.to_bits()).collect::<Vec<_>>();
                    assert_eq!(
                        bits(&ya),
                        bits(&ys),
                        "{nrows}x{ncols} rows {r0}..{r1} add {add} sequential {sequential}"
                    );
                    assert_eq!(da.0.to_bits(), ds.0.to_bits(), "dot, rows {r0}..{r1}");
                    let (mut yb, mut yt) = (y0[r0..r1].to_vec(), y0[r0..r1].to_vec());
                    a.mult_rows::<false>(&x, &mut yb, r0, add, &[]);
                    s.mult_rows::<false>(&x, &mut yt, r0, add, &[]);
                    assert_eq!(bits(&yb), bits(&ya));
                    assert_eq!(bits(&yt), bits(&ya));
                }
            }
        }
        // the product with several vectors, in either layout, has each vector's bits
        for k in [1, 3, 8, 11] {
            let xs: Vec<Vec<f64>> = (0..k)
                .map(|_| (0..ncols).map(|_| rng.unit()).collect())
                .collect();
            let xr: Vec<&[f64]> = xs.iter().map(|v| &v[..]).collect();
            for sequential in [false, true] {
                let _order = SumOrder::set(sequential);
                for add in [false, true] {
                    for m in [a, s] {
                        let mut ys: Vec<Vec<f64>> = vec![y0.clone(); k];
                        let mut yr: Vec<&mut [f64]> = ys.iter_mut().map(|v| &mut v[..]).collect();
                        m.mult_many(&xr, &mut yr, add);
                        for (x, y) in xs.iter().zip(&ys) {
                            let mut one = y0.clone();
                            a.mult(x, &mut one, add);
                            let bits =
                                |v: &[f64]| v.iter().map(|z| z.to_bits()).collect::<Vec<_>>();
                            assert_eq!(
                                bits(y),
                                bits(&one),
                                "{k} vectors, add {add}, sequential {sequential}"
                            );
                        }
                    }
                }
            }
        }
        // the entries, the diagonal, the adjoint and the CSR copy
        let (mut ea, mut es) = (Vec::new(), Vec::new());
        a.for_each(|r, c, v| ea.push((r, c, v.to_bits())));
        s.for_each(|r, c, v| es.push((r, c, v.to_bits())));
        assert_eq!(ea, es);
        for r in 0..nrows.min(ncols) {
            assert_eq!(a.entry(r, r).to_bits(), s.entry(r, r).to_bits());
        }
        let (mut xa, mut xs) = (vec![0.5; ncols], vec![0.5; ncols]);
        a.mult_adjoint_add(&w, &mut xa);
        s.mult_adjoint_add(&w, &mut xs);
        assert_eq!(
            xa.iter().map(|z| z.to_bits()).collect::<Vec<_>>(),
            xs.iter().map(|z| z.to_bits()).collect::<Vec<_>>()
        );
        let mut back = Vec::new();
        s.to_csr()
            .unwrap()
            .for_each(|r, c, v| back.push((r, c, v.to_bits())));
        assert_eq!(back, ea);
        assert_eq!(a.lower_reach(), s.lower_reach());
    }
}

/// Rows of very different lengths side by side are sorted within windows where that pads less
/// (an order-2 finite-element matrix: rows of 27, 45, 75 and 125 entries in turn), with 16-bit
/// columns where every row allows them; one long row among short ones in every window would still
/// pad too much: CSR stays.
#[test]
fn uneven_rows_sort_or_stay_csr() {
    let rows = |len: &dyn Fn(usize) -> usize, reach: usize| {
        let (mut p, mut i) = (vec![0i32], Vec::new());
        for r in 0..1000 {
            i.extend((0..len(r)).map(|k| ((r + k * reach) % 100_000) as i32));
            let row = &mut i[p[r] as usize..];
            row.sort_unstable();
            p.push(i.len() as i32);
        }
        let v = vec![1.0f64; i.len()];
        (p, i, v)
    };
    let fe = |r: usize| [27, 45, 75, 125, 45, 75, 27][r % 7];
    let (p, i, v) = rows(&fe, 3);
    let s = Sell::from_csr(&p, &i, &v, 100_000).expect("sorted");
    assert_eq!(s.shape(), (true, true));
    let (p, i, v) = rows(&fe, 1_000);
    let s = Sell::from_csr(&p, &i, &v, 100_000).expect("sorted");
    assert_eq!(s.shape(), (true, false));
    // even rows stay in their order
    let (p, i, v) = rows(&|r| 5 + (r % 50 == 0) as usize, 3);
    assert_eq!(
        Sell::from_csr(&p, &i, &v, 100_000).unwrap().shape(),
        (false, true)
    );
    let (p, i, v) = rows(&|r| if r % 128 == 5 { 50 } else { 1 }, 3);
    assert!(Sell::from_csr(&p, &i, &v, 100_000).is_none());
    assert!(Sell::<f64>::from_csr(&[0i32, 0], &[], &[], 0).is_some());
    let _ = f64::zero();
}

/// 16-bit columns only where they move fewer bytes: not for rows of one entry, not when rows that
/// need 32-bit columns hold over an eighth of the entries; and a matrix parlops copies takes them
/// where SELL-8 does not apply and its rows are long (16 entries or more on average), with 32-bit
/// and 64-bit input alike.
#[test]
fn narrow_where_it_pays() {
    let diag: Vec<i32> = (0..=100).collect();
    let cols: Vec<i32> = (0..100).collect();
    assert!(Narrow::from_csr(&diag, &cols, &[1.0f64; 100], 100).is_none());
    // 20 rows of 10 entries spanning 100,000 columns, 80 rows of 10 within 9 columns
    let (mut p, mut i) = (vec![0i64], Vec::new());
    for r in 0..100i64 {
        let (step, at) = if r < 20 { (10_000, 0) } else { (1, r * 1000) };
        i.extend((0..10).map(|k| at + k * step));
        p.push(i.len() as i64);
    }
    let v = vec![1.0f64; i.len()];
    assert!(Narrow::from_csr(&p, &i, &v, 100_000).is_none());
    for r in 1..=20 {
        // the same 20 rows, now within reach
        for k in 0..10 {
            i[(r - 1) * 10 + k] = k as i64 * 6_000;
        }
    }
    let n = Narrow::from_csr(&p, &i, &v, 100_000).expect("all rows narrow");
    assert!(n.wide.is_empty());
    // rows of 20 entries with one of 4 in ten, near or far apart: 16-bit columns when SELL-8
    // does not take them (on this CPU, or as double precision without AVX-512); rows of 9 stay CSR
    for (wide, long) in [(false, true), (true, true), (false, false)] {
        let (mut p, mut i) = (vec![0i32], Vec::new());
        for r in 0..1000i32 {
            let n = match (r % 10 == 0, long) {
                (true, _) => 4,
                (false, true) => 20,
                (false, false) => 9,
            };
            i.extend((0..n).map(|k| (r * 70 + k * if wide { 9_000 } else { 3 }) % 70_000));
            let row = &mut i[p[r as usize] as usize..];
            row.sort_unstable();
            p.push(i.len() as i32);
        }
        let v = vec![2.0f64; i.len()];
        let b = LocalCsr::new(
            1000,
            70_000,
            Idx::I32(Arr::Owned(p)),
            Idx::I32(Arr::Owned(i)),
            Arr::Owned(v),
            "b",
        )
        .unwrap()
        .compacted();
        match (&b.compact, Sell::<f64>::pays()) {
            (Some(Compact::Sell(_)), true) => {}
            (Some(Compact::Narrow(n)), false) => {
                assert!(long);
                assert_eq!(n.wide.is_empty(), !wide)
            }
            (None, false) => assert!(wide || !long),
            _ => panic!("layout on this CPU (pays {})", Sell::<f64>::pays()),
        }
    }
}

/// The CSR loop (whatever this CPU runs it with: four scalar chains, or their AVX2 lanes) forms
/// each row as [`super::kernels::sum_row`] does: rows of every length against that sum, bit for
/// bit, over blocks of rows that start and end anywhere, added or not, with the
/// fused dot, and over a block whose rows are mostly empty (the listed non-empty rows).
#[test]
fn csr_rows_are_sum_row() {
    let mut rng = Rng(5);
    let mut blocks: Vec<LocalCsr<f64>> = [(300, 400, 70), (64, 50, 23), (40, 30, 17), (203, 90, 9)]
        .into_iter()
        .map(|(nrows, ncols, maxlen)| block(&mut rng, nrows, ncols, maxlen, None))
        .collect();
    // rows mostly empty: the loop visits the listed non-empty ones when adding
    let (mut p, mut i, mut v) = (vec![0i32], Vec::new(), Vec::new());
    for r in 0..157usize {
        if r % 4 == 1 || r % 7 == 0 {
            for c in 0..(r % 13 + 1) {
                i.push(((r * 7 + c * 5) % 60) as i32);
                v.push(rng.unit());
            }
        }
        p.push(i.len() as i32);
    }
    let sparse = Arr::Owned(v);
    blocks.push(
        LocalCsr::new(
            157,
            60,
            Idx::I32(Arr::Owned(p)),
            Idx::I32(Arr::Owned(i)),
            sparse,
            "t",
        )
        .unwrap(),
    );
    for a in &blocks {
        let (nrows, ncols) = (a.nrows, a.ncols);
        let x: Vec<f64> = (0..ncols).map(|_| rng.unit()).collect();
        let w: Vec<f64> = (0..nrows).map(|_| rng.unit()).collect();
        let y0: Vec<f64> = (0..nrows).map(|_| rng.unit()).collect();
        let mut rows = vec![Vec::new(); nrows];
        a.for_each(|r, c, v| rows[r].push((c, v)));
        for sequential in [false, true] {
            let _order = SumOrder::set(sequential);
            let sums: Vec<f64> = rows
                .iter()
                .map(|e| super::kernels::sum_row(e.len(), !sequential, |k| e[k].1 * x[e[k].0]))
                .collect();
            for (r0, r1) in [
                (0, nrows),
                (1, nrows),
                (3, nrows - 2),
                (nrows / 3, nrows / 2 + 3),
            ] {
                for add in [false, true] {
                    let mut y = y0[r0..r1].to_vec();
                    let d = a.mult_rows::<true>(&x, &mut y, r0, add, &w[r0..r1]);
                    let mut dot = (0.0, 0.0);
                    for r in r0..r1 {
                        let want = if add { y0[r] + sums[r] } else { sums[r] };
                        assert_eq!(
                            y[r - r0].to_bits(),
                            want.to_bits(),
                            "row {r} of {} entries, rows {r0}..{r1}, add {add}",
                            rows[r].len()
                        );
                        crate::exec::ops::add_dot(&mut dot, w[r], sums[r]);
                    }
                    assert_eq!(d.0.to_bits(), dot.0.to_bits(), "dot, rows {r0}..{r1}");
                    let mut yb = y0[r0..r1].to_vec();
                    a.mult_rows::<false>(&x, &mut yb, r0, add, &[]);
                    assert_eq!(yb, y);
                }
            }
        }
    }
}

/// New values staged into a block of every layout (CSR, chunked sorted or not with 32- or 16-bit
/// columns, narrow) land where the CSR block has them: the block's entries, in storage order, are
/// the CSR pattern with the new values, whatever layout the staged block takes.
#[test]
fn staged_values_keep_the_csr_order() {
    let mut rng = Rng(23);
    for (nrows, ncols, maxlen, near) in [
        (203, 190, 9, None),
        (517, 600, 20, None),
        (37, 37, 20, None),
        (400, 500_000, 70, Some(30_000)),
    ] {
        let a = block(&mut rng, nrows, ncols, maxlen, near);
        let mut layouts = vec![a.to_csr().unwrap()];
        let mut shapes = vec![None];
        for sort in [false, true] {
            for narrow in [false, true] {
                shapes.push(Some(Shape {
                    sort: Some(sort),
                    narrow: Some(narrow),
                }));
            }
        }
        // the layouts this block can take (`compact` panics on one it cannot)
        let quiet = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        for shape in shapes {
            let made =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| compact(&a, shape)));
            layouts.extend(made.ok());
        }
        std::panic::set_hook(quiet);
        assert!(
            layouts.len() >= 3,
            "{nrows}x{ncols}: {} layouts",
            layouts.len()
        );
        let mut want = Vec::new();
        a.for_each(|r, c, _| want.push((r, c, rng.unit())));
        for mut b in layouts {
            let staged = b.stage(want.iter().map(|e| e.2).collect()).unwrap();
            b.commit(staged);
            let mut got = Vec::new();
            b.for_each(|r, c, v| got.push((r, c, v)));
            assert_eq!(got, want, "{nrows}x{ncols}");
        }
    }
}

/// The copy to hypre's arrays (`add_row_counts`, `scatter` through both column maps) writes every
/// row's entries in storage order, as `for_each` visits them, from CSR arrays (32- and 64-bit),
/// SELL-8 chunks (sorted or not, 32- or 16-bit columns) and 16-bit-offset rows alike.
#[test]
fn scatter_is_for_each() {
    use super::ColMap;
    let mut rng = Rng(17);
    let (mut seen, mut narrow) = (Vec::new(), false);
    for (nrows, ncols, maxlen, near) in [
        (0, 5, 3, None),
        (37, 50, 9, Some(4)),
        (300, 2000, 40, Some(30)),
        (129, 70_000, 20, None),
    ] {
        let b = block(&mut rng, nrows, ncols, maxlen, near);
        let wide = {
            let c = b.to_csr().unwrap();
            let (Idx::I32(p), Idx::I32(i)) = (&c.indptr, &c.indices) else {
                unreachable!()
            };
            let p: Vec<i64> = p.as_slice().iter().map(|&x| x as i64).collect();
            let i: Vec<i64> = i.as_slice().iter().map(|&x| x as i64).collect();
            let v = c.values.as_slice().to_vec();
            LocalCsr::new(
                nrows,
                ncols,
                Idx::I64(Arr::Owned(p)),
                Idx::I64(Arr::Owned(i)),
                Arr::Owned(v),
                "wide",
            )
            .unwrap()
        };
        let mut layouts = vec![wide];
        // (SELL-8 sorts where that pads less, 16-bit columns where the rows allow them)
        for shape in [
            Some(Shape {
                sort: Some(false),
                narrow: Some(false),
            }),
            Some(Shape {
                sort: None,
                narrow: Some(false),
            }),
            Some(Shape {
                sort: Some(false),
                narrow: None,
            }),
            Some(Shape::default()),
            None,
        ] {
            layouts.extend(try_compact(&b, shape));
        }
        for l in &layouts {
            match &l.compact {
                Some(Compact::Sell(s)) => seen.push(s.shape()),
                Some(Compact::Narrow(_)) => narrow = true,
                None => {}
            }
        }
        let table: Vec<i64> = (0..ncols as i64).map(|c| 7 * c + 3).collect();
        for l in std::iter::once(&b).chain(layouts.iter()) {
            let mut want: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nrows];
            l.for_each(|r, c, v| want[r].push((c, v)));
            let mut counts = vec![1usize; nrows];
            l.add_row_counts(&mut counts);
            for r in 0..nrows {
                assert_eq!(counts[r], want[r].len() + 1, "row {r}'s count");
            }
            for (map, f) in [
                (
                    ColMap::Offset(1000),
                    &(|c: usize| 1000 + c as i64) as &dyn Fn(usize) -> i64,
                ),
                (ColMap::Table(&table), &|c: usize| 7 * c as i64 + 3),
            ] {
                // rows placed from 2 on, one free slot after each: scatter writes only its own
                let mut fill = vec![0usize; nrows];
                let mut at = 2;
                for r in 0..nrows {
                    fill[r] = at;
                    at += want[r].len() + 1;
                }
                let start = fill.clone();
                let (mut cols, mut vals) = (vec![-1i64; at], vec![-1.0f64; at]);
                l.scatter(&mut fill, map, &mut cols, &mut vals);
                for r in 0..nrows {
                    assert_eq!(fill[r], start[r] + want[r].len());
                    for (q, &(c, v)) in want[r].iter().enumerate() {
                        assert_eq!(
                            (cols[start[r] + q], vals[start[r] + q].to_bits()),
                            (f(c), v.to_bits())
                        );
                    }
                    assert_eq!((cols[fill[r]], vals[fill[r]]), (-1, -1.0));
                }
                assert_eq!((cols[0], cols[1]), (-1, -1));
            }
        }
    }
    // every layout met: SELL-8 sorted and not, with 16-bit columns and 32-bit ones, and Narrow
    for want in [(false, false), (true, false), (false, true), (true, true)] {
        assert!(
            seen.contains(&want),
            "no SELL-8 block of shape {want:?}: {seen:?}"
        );
    }
    assert!(narrow);
}

/// The product with several vectors on CSR arrays of either index width, across pieces
/// (`multi::PIECE` rows), with 1-16 vectors (the lanes' groups of eight and four, and the vectors
/// left over), has each vector's bits of the one-vector product, in both sum orders.
#[test]
fn many_vectors_have_each_vectors_bits() {
    let mut rng = Rng(23);
    let (nrows, ncols) = (2 * super::multi::PIECE + 77, 2 * super::multi::PIECE + 500);
    let a = block(&mut rng, nrows, ncols, 40, Some(300));
    let wide = {
        let (Idx::I32(p), Idx::I32(i)) = (&a.indptr, &a.indices) else {
            unreachable!("block() makes 32-bit arrays")
        };
        let w = |s: &Arr<i32>| Arr::Owned(s.as_slice().iter().map(|&c| c as i64).collect());
        let v = Arr::Owned(a.values.as_slice().to_vec());
        LocalCsr::new(nrows, ncols, Idx::I64(w(p)), Idx::I64(w(i)), v, "test").unwrap()
    };
    let xs: Vec<Vec<f64>> = (0..16)
        .map(|_| (0..ncols).map(|_| rng.unit()).collect())
        .collect();
    let y0: Vec<f64> = (0..nrows).map(|_| rng.unit()).collect();
    let bits = |v: &[f64]| v.iter().map(|z| z.to_bits()).collect::<Vec<_>>();
    for sequential in [false, true] {
        let _order = SumOrder::set(sequential);
        for k in [1, 4, 5, 8, 12, 13, 16] {
            let xr: Vec<&[f64]> = xs[..k].iter().map(|v| &v[..]).collect();
            for m in [&a, &wide] {
                for add in [false, true] {
                    let mut ys: Vec<Vec<f64>> = vec![y0.clone(); k];
                    let mut yr: Vec<&mut [f64]> = ys.iter_mut().map(|v| &mut v[..]).collect();
                    m.mult_many(&xr, &mut yr, add);
                    for (j, (x, y)) in xs.iter().zip(&ys).enumerate() {
                        let mut one = y0.clone();
                        a.mult(x, &mut one, add);
                        assert_eq!(bits(y), bits(&one), "{k} vectors, vector {j}, add {add}");
                    }
                }
            }
        }
    }
}
