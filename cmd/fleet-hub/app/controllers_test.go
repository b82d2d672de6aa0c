package app

import "testing"

// A hub restarted on another port finds its previous address in the
// export's endpoint slice; the path is still right, the address is its own.
func TestServedHereKeepsThePathAtTheLoopbackAddress(t *testing.T) {
	const path = "/services/apiexport/1x2y/placement.kubernetes-fleet.io"
	u, err := servedHere("https://127.0.0.1:44253"+path, "https://127.0.0.1:17443")
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://127.0.0.1:17443" + path; u.String() != want {
		t.Errorf("got %s, want %s", u, want)
	}
	if _, err := servedHere("https://127.0.0.1:44253/%zz", "https://127.0.0.1:17443"); err == nil {
		t.Error("an endpoint that is not a URL was taken")
	}
}
