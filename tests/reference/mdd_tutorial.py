"""The data of PyLops-MPI's MDD tutorial (tutorials/mdd.py: hyperbolic events, a two-sided 799 x 61
model, the kernel's first 200 frequencies of 101 x 61, prescaled by dt sqrt(nt)), in double precision,
shared by tests/reference/mdc.py and benches/mdc.py."""
import numpy as np
from pylops.utils.seismicevents import hyperbolic2d, makeaxis
from pylops.utils.tapers import taper3d
from pylops.utils.wavelets import ricker

PAR = {"ox": -300, "dx": 10, "nx": 61, "oy": -500, "dy": 10, "ny": 101, "ot": 0, "dt": 0.004, "nt": 400,
       "f0": 20, "nfmax": 200}


def tutorial():
    """(G in frequency, nfmax x ny x nx, prescaled; the model, nt2 x nx; nt2, nx, ny, nfmax, dt)."""
    par = PAR
    tap = taper3d(par["nt"], (par["ny"], par["nx"]), (5, 5), tapertype="hanning")
    t, _, xax, yax = makeaxis(par)
    wav = ricker(t[:41], f0=par["f0"])[0]
    mrefl, _ = hyperbolic2d(xax, t, 0.2, 1100.0, 1.0, wav)
    gwav = np.zeros((par["ny"], par["nx"], par["nt"]))
    for iy, y0 in enumerate(yax):
        gwav[iy] = hyperbolic2d(xax - y0, t, (0.2, 0.5, 0.7), (1200.0, 1500.0, 2000.0), (1.0, 0.6, 0.5), wav)[1]
    gwav *= tap
    nt2, nx, ny, nf = 2 * par["nt"] - 1, par["nx"], par["ny"], par["nfmax"]
    mrefl = np.concatenate((np.zeros((nx, par["nt"] - 1)), mrefl), axis=-1)
    gwav2 = np.concatenate((np.zeros((ny, nx, par["nt"] - 1)), gwav), axis=-1)
    gf = np.fft.rfft(gwav2, nt2, axis=-1)[..., :nf].transpose(2, 0, 1) * (par["dt"] * np.sqrt(par["nt"]))
    return gf, mrefl.T, nt2, nx, ny, nf, par["dt"]
