// The JSON API client: every answer, error or not, comes back as {status, data}; a network failure or a body
// that is not JSON becomes the same {error: {message, type}} shape the server's errors have.

export function api(path, body) {
  var init = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)};
  return fetch(path, init).then(function (res) {
    return res.text().then(function (text) {
      var data;
      try { data = JSON.parse(text); } catch (e) { data = {error: {message: "server answered " + res.status, type: "HTTPError"}}; }
      return {status: res.status, data: data};
    });
  }, function () {
    return {status: 0, data: {error: {message: "the server is not reachable", type: "NetworkError"}}};
  });
}
